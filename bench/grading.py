"""Batch grading throughput, warm (forked runners and workers) against cold (a new interpreter each), in one run.

    python bench/grading.py [--assignment masking] [--copies 100] [--jobs 1 2] [--modes warm cold] [--without NAME ...]

Grades ``--copies`` submissions, the assignment's bundled examples (``examples/<name>/``) over and over, once per
mode and ``--jobs``, without the retraining test. Prints submissions per minute, the warm/cold ratio, and for one
submission (the median of the reference's copies) the seconds per phase that the runner records
(``extra_data.phases``: the process until grading began, staging, loading the reference, the tests, shutting down;
within the tests: starting workers, importing the code in them, waiting on calls of that code, computing expected
values, the runtime tests), with the fixed overhead's share of the grading: what a grading costs whatever its tests
and its code do (the process until grading began, staging, loading the reference, starting workers: forked,
confined, ready; shutting down), and the student's code's share (its import, where a notebook runs its cells, and
the calls).
The rest is the tests' own work: the trusted side's checks, expected values, the runtime tests' timed calls.
``--without infinite_loop`` leaves that example out: it runs to the 20 s load limit, which is most of a batch's time
whatever the mode, so a class with few such submissions is closer to the batch without it. Not part of CI: a full run
takes many minutes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import environment

from autograder import course
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions
from autograder.sandbox.config import COLD_ENV

FIXED = ("startup", "staging", "reference", "workers starting", "shutdown")


def copies(name: str, count: int, folder: Path, without: tuple[str, ...] = ()) -> list[Job]:
    """``count`` submissions cycling through the assignment's examples (but those named in ``without``), as jobs."""
    examples = sorted(p for p in (course.REPO_ROOT / "examples" / name).iterdir()
                      if p.is_dir() and p.name not in without)
    jobs = []
    for index in range(count):
        source = examples[index % len(examples)]
        target = folder / f"{index:03d}-{source.name}"
        shutil.copytree(source, target, symlinks=False)
        jobs.append(Job(target.name, target, name))
    return jobs


def grade(jobs: list[Job], out: Path, workers: int, cold: bool) -> tuple[float, list]:
    os.environ[COLD_ENV] = "1" if cold else "0"
    shutil.rmtree(out, ignore_errors=True)
    started = time.monotonic()
    collected = grade_all(jobs, out, GradingOptions(skip_tags=("retraining",)), workers=workers, progress=False)
    return time.monotonic() - started, collected


def phases(collected: list) -> dict[str, float]:
    """The median seconds per phase over the reference's copies."""
    rows = [r.extra_data.get("phases", {}) for r in collected if r.submission.endswith("reference")]
    return {key: statistics.median(row[key] for row in rows) for key in rows[0]} if rows else {}


def shares(row: dict[str, float]) -> tuple[float, float]:
    """The fixed overhead's and the student's code's shares of one grading (its code: importing it, and the calls)."""
    total = sum(row[k] for k in ("startup", "staging", "reference", "tests", "shutdown"))
    return sum(row[k] for k in FIXED) / total, (row["loading code"] + row["student code"]) / total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="masking")
    parser.add_argument("--copies", type=int, default=100)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--modes", nargs="+", default=["warm", "cold"], choices=["warm", "cold"])
    parser.add_argument("--without", nargs="*", default=[], help="examples to leave out (e.g. infinite_loop)")
    options = parser.parse_args(argv)
    print(environment())
    with tempfile.TemporaryDirectory(prefix="autograder-bench-") as temp:
        jobs = copies(options.assignment, options.copies, Path(temp) / "submissions", tuple(options.without))
        rates: dict[tuple[str, int], float] = {}
        for workers in options.jobs:
            for mode in options.modes:
                seconds, collected = grade(jobs, Path(temp) / "out", workers, mode == "cold")
                rates[mode, workers] = len(jobs) / seconds * 60
                row = phases(collected)
                print(f"{mode}, --jobs {workers}: {len(jobs)} submissions in {seconds:.1f} s, "
                      f"{rates[mode, workers]:.1f} per minute")
                if row:
                    shown = ", ".join(f"{k} {v:.2f}" for k, v in row.items())
                    fixed, student = shares(row)
                    print(f"  one reference grading (s): {shown}; fixed overhead {fixed:.0%}, "
                          f"student code {student:.0%}")
            if ("warm", workers) in rates and ("cold", workers) in rates:
                print(f"--jobs {workers}: warm/cold {rates['warm', workers] / rates['cold', workers]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
