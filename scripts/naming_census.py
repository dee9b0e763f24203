"""How the catalogue's mistakes are named: each mutant graded as a submission (without the runtime and retraining
tests), counted as named right (its own description, and only it; how many of those on a test's comparisons alone,
without a probe's confirmation), named wrong (another mistake's description in
some test) or not named. ``--extra DIR`` grades the mutant files of ``DIR/<assignment>/`` too, outside the
catalogue (held-out mistakes: is a name given to one of them right?).

    .venv/bin/python scripts/naming_census.py masking positions --out /tmp/census [--extra DIR]

It uses only the catalogue, jobs and ``grade_all`` (with ``GradingOptions``, since issue 46), so that it also measures
an older checkout of that age: ``PYTHONPATH=<that checkout> .venv/bin/python scripts/naming_census.py ...``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from autograder import course, trees
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading import mutants
from autograder.grading_options import GradingOptions

SKIP_TAGS = ("retraining", "runtime")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--extra", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    for name in args.names:
        assignment = course.load(name)
        subjects = [("catalogue", m) for m in mutants.catalog(assignment)]
        if args.extra is not None:
            subjects += [("held-out", mutants.Mutant(assignment, p)) for p in sorted((args.extra / name).glob("*.py"))]
        folder = args.out / name / "subjects"
        if folder.exists():
            trees.remove(folder)
        folder.mkdir(parents=True)
        jobs = [Job(f"{name}/{kind}-{m.name}", m.materialize(folder / f"{kind}-{m.name}"), name,
                    options=GradingOptions(skip_tags=SKIP_TAGS))
                for kind, m in subjects]
        graded = grade_all(jobs, args.out, GradingOptions(oracle="live"), workers=args.jobs, progress=False)
        counts: dict[str, dict[str, int]] = {}
        for (kind, mutant), results in zip(subjects, graded, strict=True):
            named = {t.extra_data.get("mistake") for t in results.tests} - {None}
            alone = any(t.extra_data.get("mistake_unprobed") for t in results.tests)
            verdict = "wrong" if named - {mutant.description} else "right" if named else "none"
            count = counts.setdefault(kind, {"right": 0, "wrong": 0, "none": 0, "alone": 0})
            count[verdict] += 1
            count["alone"] += verdict == "right" and alone
            others = "; ".join(sorted(named - {mutant.description}))
            how = " (on a test alone)" if verdict == "right" and alone else ""
            print(f"{name} {kind} {mutant.name}: {verdict}{how}{' as: ' + others if others else ''}")
        for kind, count in counts.items():
            total = count["right"] + count["wrong"] + count["none"]
            print(f"| {name} | {kind} | {total} | {count['right']} ({count['alone']} on a test alone) | "
                  f"{count['wrong']} | {count['none']} |")


if __name__ == "__main__":
    main()
