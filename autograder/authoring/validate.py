"""``autograder validate``: evidence that a suite grades correctly.

For each assignment it grades, with every test: the reference (must earn every point) and the untouched skeleton (must
earn none); and every mutant in ``tests/mutants/<name>/`` (each must lose points, and be named in its feedback unless
marked ``# unnamed:``) without the costly tests tagged in ``MUTANT_SKIP_TAGS``: retraining a model takes minutes, so
every mutant must be caught by a cheap test, and CI retrains only the reference; nor the runtime tests, but for
mutants marked ``# slow`` (``autograder.grading.mutants``); and every correct alternative in
``tests/alternatives/<name>/`` (each must keep every point, runtime tests included; retrained only where marked
``# retraining``: ``autograder.authoring.alternatives``). Then, with the public tests only and the recorded
expectations that students use: the reference (full public marks) and the skeleton (none). Then the hidden tests again,
under fresh secrets instead of the committed one (a term's secret draws the hidden inputs): the reference and every
alternative must keep every point, no mutant may escape, and no hidden test's verdict on a subject may change with the
secret, since a draw that does not exercise what its test checks (one key, where any scaling gives the same weights)
passes a mistake under one secret only. Those runs skip the runtime tests too (their inputs are fixed shapes, and
they are the costly ones) and name no mistake (``runner.make_oracle``'s ``verdicts``). It prints the matrix of which
tests each subject fails and a line that counts how the mutants were named (``_naming``); any broken expectation
fails validation. It also checks, without grading, that every rule the skeleton's docstrings and hints state is
observed by a test or marked untestable with a reason (``authoring.rules``), and prints the count.

How many fresh secrets (``fresh_secrets``, ``--fresh-secrets``): two by default, ``validate-fresh-1`` and
``validate-fresh-2``; ``make test`` asks for one, within CI's time budget, and a maintainer who changes a hidden draw
runs the default or more. Each secret is one more grading of every subject's hidden tests.

``make test`` also grades the alternatives marked ``# retraining`` without their retraining
(``--no-retrain-alternatives``): each retraining is a minute of a core, and CI's 15 minutes already hold the
reference's (here, in the Gradescope container test and under load in tests/assignments/test_lm_retraining.py).
``bench/cpu_tier.py --implementation`` and a plain ``autograder validate`` retrain them; a change to the retraining
test or its gates runs one of them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Console

from autograder import course, sinks, trees
from autograder.authoring import alternatives, rules
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading import mutants
from autograder.grading_options import GradingOptions
from autograder.results import Results, points

MUTANT_SKIP_TAGS = ("retraining",)
FRESH_SECRETS = 2
FRESH_SKIP_TAGS = ("retraining", "runtime")


def fresh_secrets(count: int) -> list[str]:
    """The fresh secrets validate grades the hidden tests under: ``validate-fresh-1`` to ``validate-fresh-<count>``."""
    return [f"validate-fresh-{number}" for number in range(1, count + 1)]


def validate(names: list[str], out: Path, workers: int, engine: str = "local", address: str | None = None,
             fresh: int = FRESH_SECRETS, retrain_alternatives: bool = True) -> bool:
    """Validate each assignment in ``names`` (results under ``out``), grading with ``engine`` (``grade_all``).

    Each reference is graded alone first: its runtime tests are the yardstick of the batch's order, and it must keep
    every point on cores it has to itself. The alternatives that are retrained go in the batch beside the rest: the
    retraining's budgets count CPU time (issue 42), which what runs beside them does not change.
    Everything else, of every assignment, is then one batch, the assignments whose reference took longest first: a
    batch per assignment and kind waited for its slowest grading while the other cores had nothing to do. ``fresh``:
    how many fresh secrets the hidden tests are graded under again (``fresh_secrets``); ``retrain_alternatives``:
    False grades the alternatives marked ``# retraining`` without it, as the others.
    """
    secrets = fresh_secrets(fresh)
    cluster = {"engine": engine, "address": address}
    subjects = {}
    for name in names:
        assignment = course.load(name)
        catalogue = mutants.catalog(assignment)
        subjects[name] = assignment, catalogue, _jobs(assignment, catalogue, alternatives.catalog(assignment),
                                                      out / name / "subjects", retrain_alternatives)
    live = GradingOptions(oracle="live")
    references = {name: grade_all([_named(jobs[0], name, "graded")], out, live, workers=1, progress=False,
                                  **cluster)[0] for name, (_, _, jobs) in subjects.items()}
    runs = {name: _runs(name, assignment, jobs, secrets) for name, (assignment, _, jobs) in subjects.items()}
    order = sorted(names, key=lambda name: -references[name].execution_time)
    everything = [(name, kind, job) for name in order for kind, jobs in runs[name].items() for job in jobs]
    graded = grade_all([job for _, _, job in everything], out, live, workers=workers, progress=False, **cluster)
    collected = {name: {kind: [] for kind in runs[name]} for name in names}
    for (name, kind, _), results in zip(everything, graded, strict=True):
        collected[name][kind].append(_short(results))
    console = Console()
    ok = True
    for name in names:
        _, catalogue, jobs = subjects[name]
        results = collected[name]
        full = [_short(references[name]), *results.pop("graded")]
        spec = rules.check(subjects[name][0])  # static: every rule the skeleton states has a test (or a reason)
        graded_mutants, graded_alternatives = full[2:2 + len(catalogue)], full[2 + len(catalogue):]
        problems = (_judge(full[:2 + len(catalogue)], results.pop("replayed")) + _unnamed(graded_mutants, catalogue)
                    + _judge_alternatives(graded_alternatives) + spec.problems)
        for number, secret in enumerate(secrets):
            if f"fresh-{number + 1}" in results:
                problems += _judge_secret(secret, full, results[f"fresh-{number + 1}"])
        print(_matrix(name, full))
        print(spec.summary())
        print(_naming(full[2:2 + len(catalogue)], catalogue))  # the mutants, before the alternatives
        for problem in problems:
            console.print(f"[red]FAIL[/red] {name}: {sinks.rich_markup(problem)}")  # it quotes what subjects said
        if not problems:
            reference = f"{points(full[0].score)}/{points(full[0].max_score)}"
            console.print(f"[green]OK[/green] {name}: reference {reference}, skeleton {points(full[1].score)}, "
                          f"{len(catalogue)} mutants all caught, {len(graded_alternatives)} alternatives at full "
                          "marks; replayed public tests agree")
        ok = ok and not problems
    return ok


def _jobs(assignment: course.Assignment, catalogue: list[mutants.Mutant],
          others: list[alternatives.Alternative], folder: Path, retrain: bool = True) -> list[Job]:
    """The reference, the skeleton, every mutant, then every correct alternative (each materialized in ``folder``),
    without the tests it skips (the retraining, unless it is marked so and ``retrain``)."""
    if folder.exists():
        trees.remove(folder)
    folder.mkdir(parents=True)
    name = assignment.name
    return [Job("reference", assignment.solution_dir, name), Job("skeleton", assignment.skeleton_dir, name),
            *(Job(f"mutant-{mutant.name}", mutant.materialize(folder / mutant.name), name,
                  options=GradingOptions(skip_tags=MUTANT_SKIP_TAGS + (() if mutant.slow else ("runtime",))))
              for mutant in catalogue),
            *(Job(f"alternative-{other.name}", other.materialize(folder / f"alternative-{other.name}"), name,
                  options=GradingOptions(skip_tags=() if retrain and other.retraining else MUTANT_SKIP_TAGS))
              for other in others)]


def _runs(name: str, assignment: course.Assignment, jobs: list[Job], secrets: list[str]) -> dict[str, list[Job]]:
    """What is graded after the reference, by kind (its results' folder): the skeleton, the mutants and the
    alternatives, with every test they do not skip; the reference and the skeleton with the
    public tests and the recorded expectations students use; every subject's hidden tests under each of
    ``secrets``."""
    runs = {"graded": [_named(job, name, "graded") for job in jobs[1:]],
            "replayed": [_named(job, name, "replayed", public_only=True, oracle="replay") for job in jobs[:2]]}
    if assignment.hidden_dir.is_dir():
        for number, secret in enumerate(secrets):
            runs[f"fresh-{number + 1}"] = [_named(job, name, f"fresh-{number + 1}", secret=secret, hidden_only=True,
                                                  skip_tags=FRESH_SKIP_TAGS, oracle="verdicts") for job in jobs]
    return runs


def _named(job: Job, name: str, kind: str, **changes) -> Job:
    """``job`` graded into ``<name>/<kind>/<its name>`` of validate's folder, with ``changes`` to its own options."""
    return dataclasses.replace(job, name=f"{name}/{kind}/{job.name}",
                               options=dataclasses.replace(job.options, **changes))


def _short(results: Results) -> Results:
    """``results`` under the subject's own name (reference, skeleton, mutant-...), as the matrix and problems say."""
    results.submission = results.submission.rpartition("/")[2]
    return results


def _judge(full: list[Results], public: list[Results]) -> list[str]:
    reference, skeleton, *caught = full
    problems = []
    failing = [t.name for t in reference.tests if t.score < t.max_score or t.status != "passed"]
    if failing or reference.output:
        problems.append(f"the reference loses points on: {', '.join(failing) or reference.output}")
    if skeleton.score > 0:
        scoring = [t.name for t in skeleton.tests if t.score > 0]
        problems.append(f"the untouched skeleton earns points on: {', '.join(scoring)}")
    if not caught:
        problems.append("there are no mutants: add known-wrong implementations to tests/mutants/<name>/")
    for results in caught:
        if results.score >= results.max_score:
            problems.append(f"{results.submission} loses no points: add a test that catches it")
    replay_reference, replay_skeleton = public
    if replay_reference.score < replay_reference.max_score or replay_reference.max_score == 0:
        failing = [t.name for t in replay_reference.tests if t.score < t.max_score]
        problems.append(f"with recorded expectations the reference loses public points on {failing}: "
                        "run `autograder build`")
    if replay_skeleton.score > 0:
        problems.append("with recorded expectations the skeleton earns public points")
    return problems


def _judge_secret(secret: str, full: list[Results], fresh: list[Results]) -> list[str]:
    """What changed when the hidden tests drew their inputs under ``secret`` (``fresh``) instead of the committed
    one (``full``)."""
    problems = []
    for committed, results in zip(full, fresh, strict=True):
        passed = {t.name: t.score >= t.max_score for t in committed.tests}
        if committed.submission == "reference" or committed.submission.startswith("alternative-"):
            failing = [t.name for t in results.tests if t.score < t.max_score]
            if failing:
                problems.append(f"under the secret {secret!r} the {committed.submission} loses points on: "
                                f"{', '.join(failing)}")
            continue
        changed = [t.name for t in results.tests if t.name in passed and passed[t.name] != (t.score >= t.max_score)]
        if changed:
            problems.append(f"{committed.submission}: under the secret {secret!r} the verdict of "
                            f"{', '.join(changed)} changes: make its draw exercise what it checks whatever the secret")
        rerun = {t.name for t in results.tests}
        if committed.submission.startswith("mutant-") and all(t.score >= t.max_score for t in results.tests) and all(
                passed[name] for name in passed.keys() - rerun):
            problems.append(f"{committed.submission} loses no points under the secret {secret!r}")
        if committed.submission == "skeleton" and results.score > 0:
            problems.append(f"under the secret {secret!r} the untouched skeleton earns hidden points")
    return problems


def _judge_alternatives(graded: list[Results]) -> list[str]:
    """Every correct alternative (``autograder.authoring.alternatives``) keeps every point of every test it ran: one
    that loses a point is a false failure to fix in the check, or an alternative that breaks a rule of the spec (fix
    it, and say the rule in its docstring)."""
    problems = []
    for results in graded:
        failing = [t.name for t in results.tests if t.score < t.max_score or t.status != "passed"]
        if failing or results.score < results.max_score or results.max_score == 0:
            problems.append(f"{results.submission}, a correct alternative, loses points on: "
                            f"{', '.join(failing) or results.output or 'every test (none ran)'}: fix the check if it "
                            "fails a correct solution, or the alternative if it breaks a rule the skeleton states")
    return problems


def _unnamed(graded: list[Results], catalogue: list[mutants.Mutant]) -> list[str]:
    """Naming honesty, on the catalogue graded as submissions. Every mutant not marked ``# unnamed:`` must be named in
    its own feedback ("This looks like a known mistake:" with its own description, in some test it fails), so that a
    student who makes that mistake is told which; the grader names a mistake only where the output matches it alone
    (``api.matched_mistakes``) and the suite's probes confirm it (``autograder.grading.naming``), so a test whose inputs
    give two mistakes the same output names neither unless the probes tell them apart, and this says which. No mutant
    may be named as another mistake, anywhere: that is the proof that a name is never given to the wrong mistake of
    the catalogue."""
    problems = []
    for results, mutant in zip(graded, catalogue, strict=True):
        named = {t.extra_data.get("mistake") for t in results.tests} - {None}
        for other in sorted(named - {mutant.description}):
            problems.append(f"{results.submission} is named as another mistake: {other!r}: make the tests' inputs "
                            "give the two different outputs")
        if mutant.unnamed is None and mutant.description not in named:
            alike = sorted({d for t in results.tests for d in t.extra_data.get("mistakes_alike", ())}
                           - {mutant.description})
            why = (f"; on the inputs of the tests it fails its output is also that of: {'; '.join(alike)}: change "
                   "those inputs so that the two differ" if alike else "")
            problems.append(f"{results.submission} loses points but its feedback never names it: make a test compare "
                            f"an output that tells it apart (or mark it '# unnamed: WHY'){why}")
    return problems


def _naming(graded: list[Results], catalogue: list[mutants.Mutant]) -> str:
    """How the catalogue's mutants were named in their own gradings: as themselves (confirmed by the suite's probes,
    or on a test's comparisons alone where no probe shows the mistake: ``autograder.grading.naming``), as another
    mistake, or not at all."""
    counts = {"probes": 0, "test": 0, "wrong": 0, "none": 0}
    for results, mutant in zip(graded, catalogue, strict=True):
        named = {t.extra_data.get("mistake") for t in results.tests} - {None}
        unprobed = any(t.extra_data.get("mistake_unprobed") for t in results.tests
                       if t.extra_data.get("mistake") == mutant.description)
        counts["wrong" if named - {mutant.description} else "none" if not named else "test" if unprobed
               else "probes"] += 1
    return (f"naming: {counts['probes'] + counts['test']} of {len(catalogue)} mutants named as themselves "
            f"({counts['probes']} confirmed by the probes, {counts['test']} on a test alone), {counts['wrong']} as "
            f"another mistake, {counts['none']} not named")


def _matrix(name: str, full: list[Results]) -> str:
    """Plain text: one row per subject, one column per test (x fails, ~ partial, . passes, - not run)."""
    tests = [t for t in full[0].tests if t.max_score > 0]
    width = max(len(r.submission) for r in full) + 2
    lines = [f"{name}: which tests each subject fails (x = fails, ~ = partial credit, . = passes, - = skipped)",
             " " * (width + 10) + " ".join(f"{t.number:>4}" for t in tests)]
    for results in full:
        by_number = {t.number: t for t in results.tests}
        skipped = {t["number"] for t in results.extra_data.get("skipped", [])}
        cells = []
        for test in tests:
            got = by_number.get(test.number)
            cells.append("-" if test.number in skipped else "." if got and got.score >= got.max_score
                         else "~" if got and got.score > 0 else "x")
        score = f"{points(results.score)}/{points(results.max_score)}"
        lines.append(f"{results.submission:<{width}}{score:>9} " + " ".join(f"{c:>4}" for c in cells))
    lines += ["", *(f"  {t.number:>4}  {t.name}" for t in tests)]
    return "\n".join(lines)
