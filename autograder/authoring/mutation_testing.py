"""``autograder validate --mutate``: the suites graded against mistakes nobody catalogued.

Every mutant of ``autograder.authoring.mutations`` is graded as a submission would be, in one batch: first with the
public tests, then, for those the public tests let through, with the hidden ones; a mutant that loses a point is
killed. Neither run retrains a model or times the runtime (``SKIP_TAGS``: those tests catch what is slow, not what is
wrong, and take minutes), nor computes the catalogue's values to name a mistake (``oracle="verdicts"``): only the
verdict counts here. What survives is either a gap in the suites (add a check that catches it, and its mutant to
``tests/mutants/<name>/`` so the catalogue keeps it) or a change that no correct test can see; that is recorded in
``tests/mutants/<name>/equivalent.toml``, keyed by the mutant's stable id, with the reason:

    ["masking.py:masked_softmax:compare:2df17e1f"]
    change = "total > 0 -> total >= 0"
    reason = "a row's total of exponentials is never negative: >= 0 and > 0 differ only on an all-masked row, ..."

A mutant recorded as equivalent that is killed, or that no longer exists (its function's code changed), is a problem
too: the record must follow the code. ``stale`` checks only the latter, without grading anything (``make test``).
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course, trees
from autograder.authoring import mutations
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions
from autograder.results import Results

SKIP_TAGS = ("retraining", "runtime")
EQUIVALENT = "equivalent.toml"


@dataclass
class Outcome:
    """What became of one assignment's mutants: ``generated`` in all, ``graded`` (all, or a sample), and of those
    ``killed``, ``equivalent`` (recorded as such and not killed) and ``alive`` (neither)."""

    name: str
    generated: int
    graded: list[mutations.Mutation] = field(default_factory=list)
    killed: list[mutations.Mutation] = field(default_factory=list)
    equivalent: list[mutations.Mutation] = field(default_factory=list)
    alive: list[mutations.Mutation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def row(self) -> str:
        """One line of the summary table (docs/performance.md)."""
        rate = f"{len(self.alive) / len(self.graded):.0%}" if self.graded else "-"
        return (f"| {self.name} | {self.generated} | {len(self.graded)} | {len(self.killed)} | "
                f"{len(self.equivalent)} | {len(self.alive)} | {rate} |")


def equivalents(assignment: course.Assignment) -> dict[str, dict]:
    """The recorded equivalent mutants of ``assignment``, by id (each with its ``change`` and ``reason``)."""
    path = assignment.mutants_dir / EQUIVALENT
    if not path.is_file():
        return {}
    with path.open("rb") as handle:
        return tomllib.load(handle)


def stale(assignment: course.Assignment) -> list[str]:
    """Problems with the record of equivalents that need no grading: an id no operator makes any more, an entry
    without a reason."""
    ids = {mutation.id for mutation in mutations.generate(assignment)}
    problems = []
    for key, entry in equivalents(assignment).items():
        if key not in ids:
            problems.append(f"{assignment.name}: {key} ({entry.get('change', '?')}) is recorded as equivalent but no "
                            f"longer made: its function changed; remove it from tests/mutants/{assignment.name}/"
                            f"{EQUIVALENT}, run `autograder validate --mutate {assignment.name}` and judge what "
                            "survives anew")
        if not str(entry.get("reason", "")).strip():
            problems.append(f"{assignment.name}: {key} is recorded as equivalent without a reason: say why no "
                            "correct test can tell it from the reference")
    return problems


def sample(found: list[mutations.Mutation], limit: int | None, seed: int = 0) -> list[mutations.Mutation]:
    """At most ``limit`` of ``found``, drawn alike from every function (round robin over a seeded shuffle of each),
    so that a sample still covers every function a student writes."""
    if limit is None or limit >= len(found):
        return found
    by_function: dict[str, list[mutations.Mutation]] = {}
    for mutation in found:
        by_function.setdefault(f"{mutation.file}:{mutation.function}", []).append(mutation)
    draw = random.Random(seed)
    for group in by_function.values():
        draw.shuffle(group)
    picked: list[mutations.Mutation] = []
    while len(picked) < limit:
        for group in by_function.values():
            if group and len(picked) < limit:
                picked.append(group.pop())
    return sorted(picked, key=found.index)


def run(names: list[str], out: Path, workers: int, *, limit: int | None = None, functions: tuple[str, ...] = (),
        operators: tuple[str, ...] = mutations.OPERATORS, engine: str = "local",
        address: str | None = None) -> list[Outcome]:
    """Grade the mutants of each assignment in ``names`` (``limit``: a sample of at most that many per assignment;
    ``functions``, ``operators``: only those) into ``out``; the outcome of each."""
    outcomes, chosen = [], {}
    for name in names:
        assignment = course.load(name)
        found = mutations.generate(assignment, operators, functions)
        outcome = Outcome(name, len(found), graded=sample(found, limit))
        outcome.problems += stale(assignment) if not functions and operators == mutations.OPERATORS else []
        folder = out / name / "mutants"
        if folder.exists():
            trees.remove(folder)
        folder.mkdir(parents=True)
        chosen[name] = assignment, outcome, [m.materialize(assignment, folder / str(i)) for i, m in
                                             enumerate(outcome.graded)]
        outcomes.append(outcome)
    cluster = {"engine": engine, "address": address}
    public = [(name, index, Job(f"{name}/public/{index}", source, name,
                                options=GradingOptions(skip_tags=SKIP_TAGS, public_only=True, oracle="verdicts")))
              for name, (_, _, sources) in chosen.items() for index, source in enumerate(sources)]
    first = grade_all([job for _, _, job in public], out, workers=workers, progress=True, **cluster)
    survivors = [(name, index) for (name, index, _), results in zip(public, first, strict=True) if not _lost(results)]
    hidden = [(name, index, Job(f"{name}/hidden/{index}", chosen[name][2][index], name,
                                options=GradingOptions(skip_tags=SKIP_TAGS, hidden_only=True, oracle="verdicts")))
              for name, index in survivors if chosen[name][0].hidden_dir.is_dir()]
    second = grade_all([job for _, _, job in hidden], out, workers=workers, progress=True, **cluster)
    alive = {(name, index) for (name, index, _), results in zip(hidden, second, strict=True) if not _lost(results)}
    alive |= {(name, index) for name, index in survivors if not chosen[name][0].hidden_dir.is_dir()}
    for name, (assignment, outcome, _) in chosen.items():
        recorded = equivalents(assignment)
        for index, mutation in enumerate(outcome.graded):
            if (name, index) not in alive:
                outcome.killed.append(mutation)
                if mutation.id in recorded:
                    outcome.problems.append(f"{name}: {mutation.id} ({mutation.change}) is recorded as equivalent "
                                            f"but loses points: remove it from tests/mutants/{name}/{EQUIVALENT}")
            elif mutation.id in recorded:
                outcome.equivalent.append(mutation)
            else:
                outcome.alive.append(mutation)
                outcome.problems.append(f"{name}: {mutation.id} survives, line {mutation.line} of {mutation.file}: "
                                        f"{mutation.change}")
    return outcomes


def _lost(results: Results) -> bool:
    """The mutant lost a point (a grading that could not finish loses them all)."""
    return results.score < results.max_score or results.max_score == 0


def summary(outcomes: list[Outcome]) -> str:
    """The table of ``outcomes`` as docs/performance.md keeps it (Markdown)."""
    return "\n".join(["| assignment | generated | graded | killed | equivalent | alive | survival |",
                      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |", *(o.row() for o in outcomes)])
