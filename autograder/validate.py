"""``autograder validate``: evidence that a suite grades correctly.

For each assignment it grades, with every test: the reference (must earn every point) and the
untouched skeleton (must earn none); and every mutant in ``tests/mutants/<name>/`` (each must
lose points) without the costly tests tagged in ``MUTANT_SKIP_TAGS``: retraining a model takes
minutes, so every mutant must be caught by a cheap test, and CI retrains only the reference.
Then, with the public tests only and the recorded expectations that students use: the reference
(full public marks) and the skeleton (none). It prints the matrix of which tests each subject
fails; any broken expectation fails validation.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.console import Console

from autograder import assignment as assignments
from autograder import batch, mutants
from autograder.results import Results, points

MUTANT_SKIP_TAGS = ("retraining",)


def validate(names: list[str], out: Path, workers: int, engine: str = "local", address: str | None = None) -> bool:
    """Validate each assignment in ``names`` (results under ``out``), grading with ``engine`` (``batch.grade_all``)."""
    cluster = {"engine": engine, "address": address}
    console = Console()
    ok = True
    for name in names:
        assignment = assignments.load(name)
        subjects = _subjects(assignment, out / name / "subjects")
        jobs = [batch.Job(label, path, name, skip_tags=MUTANT_SKIP_TAGS if label.startswith("mutant-") else ())
                for label, path in subjects]
        # The reference alone first: its timed tests (runtime ratios, retraining within a budget measured on an
        # idle machine) must not share the cores with another grading (oversubscribed threads run many times slower).
        full = [*batch.grade_all(jobs[:1], out / name / "graded", workers=1, oracle="live", progress=False, **cluster),
                *batch.grade_all(jobs[1:], out / name / "graded", workers=workers, oracle="live", progress=False,
                                 **cluster)]
        public = batch.grade_all(jobs[:2], out / name / "replayed", workers=workers, public_only=True,
                                 oracle="replay", progress=False, **cluster)
        problems = _judge(full, public)
        print(_matrix(name, full))
        for problem in problems:
            console.print(f"[red]FAIL[/red] {name}: {problem}")
        if not problems:
            reference = f"{points(full[0].score)}/{points(full[0].max_score)}"
            console.print(f"[green]OK[/green] {name}: reference {reference}, skeleton {points(full[1].score)}, "
                          f"{len(full) - 2} mutants all caught; replayed public tests agree")
        ok = ok and not problems
    return ok


def _subjects(assignment: assignments.Assignment, folder: Path) -> list[tuple[str, Path]]:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    subjects = [("reference", assignment.solution_dir), ("skeleton", assignment.skeleton_dir)]
    for mutant in mutants.catalog(assignment):
        subjects.append((f"mutant-{mutant.name}", mutant.materialize(folder / mutant.name)))
    return subjects


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
