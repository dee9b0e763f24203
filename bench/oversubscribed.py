"""The lm reference's retraining graded on an oversubscribed machine: full marks however busy the machine gets.

    python bench/oversubscribed.py [--runs 10] [--hogs-per-core 2] [--seed 7]

Each run grades the hidden retraining test alone (autograder/suites/lm/hidden/test_retraining.py) on the reference, in
a sandboxed worker as a grading does, with a fresh seed (a fresh secret world) per run. Right after the grader's
calibration step, ``--hogs-per-core`` times as many CPU-bound processes as the machine has cores start and run until
the retraining ends: the load a shared Gradescope host or a neighbouring grading adds after the budgets were set. The
budgets count the worker's CPU time, which the hogs do not add to, so the reference keeps 6/6; with wall-clock budgets
(before issue 42) such load cost it the finetune-only part. Prints one line per run (points, wall seconds, the hogs'
count) and ``6/6 in K of N runs``; exits 1 unless every run kept 6/6. Not part of CI: a run takes minutes (the
retraining's wall time stretches by about the oversubscription); tests/assignments/test_lm_retraining.py runs one,
short.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

from common import environment

from autograder import course
from autograder.batch.runners import OPENMP

sys.path.insert(0, str(course.REPO_ROOT / "tests"))
from support.lm import retrain  # noqa: E402 - the tests' retraining of the reference, which test_lm_retraining runs

log = logging.getLogger("oversubscribed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--hogs-per-core", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7, help="the first run's seed; each run adds 1")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for name, value in OPENMP.items():  # as every grading's workers
        os.environ.setdefault(name, value)
    log.info("%s", environment())
    hogs = options.hogs_per_core * (os.cpu_count() or 1)
    full = 0
    for run in range(options.runs):
        started = time.monotonic()
        parts = retrain(seed=options.seed + run, hogs=hogs)
        points = sum(weight for _, weight, error in parts.results if error is None)
        full += points == 6 and not parts.grader_errors
        log.info("run %d (seed %d, %d hogs): %g/6 in %.0f s%s", run + 1, options.seed + run, hogs, points,
                 time.monotonic() - started,
                 "".join(f"\n  {error}" for _, _, error in parts.results if error) + "".join(parts.grader_errors))
    log.info("6/6 in %d of %d runs", full, options.runs)
    return 0 if full == options.runs else 1


if __name__ == "__main__":
    sys.exit(main())
