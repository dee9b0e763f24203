"""The same score every time: grade the same submissions again and again beside a CPU hog and report every change.

    python bench/regrading.py [--rounds 10] [--jobs 2] [--hogs 1] [--assignments masking positions lm]

Each round grades, with ``--jobs`` runners side by side while ``--hogs`` processes spin on the cores, every
assignment's reference, its bundled examples (but ``infinite_loop``, which only waits out its load timeout) and
its slow mutants (``SLOW``: the ones the runtime tests exist to catch), without the retraining test. It prints,
per submission, the scores seen over the rounds and every test whose score was not the same in all of them (a
flip), and for each slow mutant the rounds in which a runtime test failed to catch it. A grade that depends on
what else the machine is doing shows here, not in a student's gradebook. Not part of CI: it takes many minutes.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import environment

from autograder import course
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading import mutants
from autograder.grading_options import GradingOptions

SLOW = {"masking": ["attention_python_loops", "broadcast_instead_of_matmul"],
        "lm": ["slow_step_per_example", "slow_generate_per_row"]}
SKIPPED_EXAMPLES = {"infinite_loop"}


def subjects(name: str, folder: Path) -> list[Job]:
    """The reference, the examples and the slow mutants of assignment ``name``, as jobs."""
    assignment = course.load(name)
    jobs = [Job(f"{name}-reference", assignment.solution_dir, name)]
    for example in sorted((course.REPO_ROOT / "examples" / name).iterdir()):
        if example.is_dir() and example.name not in SKIPPED_EXAMPLES | {"reference"}:
            jobs.append(Job(f"{name}-{example.name}", example, name))
    for mutant in mutants.catalog(assignment):
        if mutant.name in SLOW.get(name, []):
            jobs.append(Job(f"{name}-mutant-{mutant.name}", mutant.materialize(folder / mutant.name), name))
    return jobs


def _spin() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--hogs", type=int, default=1)
    parser.add_argument("--assignments", nargs="+", default=["masking", "positions", "lm"])
    options = parser.parse_args(argv)
    hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(options.hogs)]
    for hog in hogs:
        hog.start()
    print(environment(), f"| {options.hogs} CPU hog(s), --jobs {options.jobs}, {options.rounds} rounds")
    scores: dict[str, list[dict[str, float]]] = defaultdict(list)
    uncaught: dict[str, list[int]] = defaultdict(list)
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="autograder-regrading-") as temp:
            jobs = [job for name in options.assignments for job in subjects(name, Path(temp) / name)]
            for index in range(options.rounds):
                out = Path(temp) / "out"
                shutil.rmtree(out, ignore_errors=True)
                for results in grade_all(jobs, out, GradingOptions(skip_tags=("retraining",)),
                                         workers=options.jobs, progress=False):
                    scores[results.submission].append({t.name: t.score for t in results.tests})
                    runtime = [t for t in results.tests if "runtime" in t.tags]
                    if "-mutant-" in results.submission and all(t.score == t.max_score for t in runtime):
                        uncaught[results.submission].append(index + 1)
                print(f"round {index + 1}: {time.monotonic() - started:.0f} s", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
    flips = 0
    print(f"\n| submission | total over {options.rounds} rounds | tests whose score changed |\n| --- | --- | --- |")
    for submission, rounds in scores.items():
        totals = sorted({round(sum(r.values()), 2) for r in rounds})
        changed = [f"{test} {sorted({r.get(test) for r in rounds})}" for test in rounds[0]
                   if len({r.get(test) for r in rounds}) > 1]
        flips += len(changed)
        print(f"| {submission} | {' / '.join(map(str, totals))} | {'; '.join(changed) or 'none'} |")
    for submission in scores:
        if "-mutant-" in submission:
            missed = uncaught.get(submission)
            print(f"{submission}: " + (f"NOT caught by a runtime test in rounds {missed}" if missed
                                       else f"caught by a runtime test in all {options.rounds} rounds"))
    print(f"\n{flips} flipped test(s); {sum(map(len, uncaught.values()))} slow-mutant round(s) uncaught; "
          f"{time.monotonic() - started:.0f} s")
    return 1 if flips or uncaught else 0


if __name__ == "__main__":
    sys.exit(main())
