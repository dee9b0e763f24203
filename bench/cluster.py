"""The local and the Ray engine side by side on one node: the bundled examples of each assignment, graded by each
engine in turn, as submissions per hour (the sizing table in docs/cluster.md).

    python bench/cluster.py [--assignments masking lm] [--jobs 2] [--retraining]

The local engine grades with ``--jobs`` runners at a time; the Ray engine on a local cluster of this machine's cores
(``ray.init``, started once, its start-up timed apart), one task per submission. Without ``--retraining`` the lm
retraining test is skipped, as ``make demo`` does; with it, it runs (minutes per submission on a CPU). Each
assignment's gradebooks from the two engines must hold the same scores (the runtime tests' aside): the run fails
otherwise. Not part of CI.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from common import environment

from autograder import course
from autograder.batch import ray
from autograder.batch.discovery import Job, discover
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions


def grade(jobs: list[Job], out: Path, engine: str, workers: int, skip: tuple[str, ...]) -> tuple[float, dict]:
    """Seconds to grade ``jobs`` and every submission's scores test by test, but the runtime tests' (timed against the
    reference in the same run, their partial credit varies from run to run on a busy machine, whichever engine)."""
    started = time.monotonic()
    collected = grade_all(jobs, out, GradingOptions(skip_tags=tuple(skip)), workers=workers, progress=False,
                          engine=engine)
    seconds = time.monotonic() - started
    return seconds, {r.submission: [(t.number, t.score) for t in r.tests if "runtime" not in t.tags] for r in collected}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", nargs="+", default=course.names())
    parser.add_argument("--jobs", type=int, default=2, help="the local engine's runners at a time")
    parser.add_argument("--retraining", action="store_true", help="run the lm retraining test too")
    options = parser.parse_args(argv)
    skip = () if options.retraining else ("retraining",)
    print(environment())
    started = time.monotonic()
    cluster = ray.connect(None)
    print(f"local Ray cluster: {cluster.cluster_resources().get('CPU', 0):g} CPUs, started in "
          f"{time.monotonic() - started:.1f} s")
    print(f"| assignment ({'with' if options.retraining else 'without'} retraining) | submissions | "
          f"local, --jobs {options.jobs} | Ray, one node |")
    print("| --- | --- | --- | --- |")
    same = True
    with tempfile.TemporaryDirectory(prefix="autograder-bench-") as temp:
        for name in options.assignments:
            jobs = discover([course.REPO_ROOT / "examples" / name], name)
            rates, graded = {}, {}
            for engine in ("local", "ray"):
                seconds, graded[engine] = grade(jobs, Path(temp) / engine / name, engine, options.jobs, skip)
                rates[engine] = len(jobs) / seconds * 3600
            if graded["local"] != graded["ray"]:
                same = False
                print(f"{name}: the engines' scores differ: local {graded['local']}, ray {graded['ray']}")
            print(f"| {name} | {len(jobs)} | {rates['local']:.0f} per hour | {rates['ray']:.0f} per hour |")
    print("scores identical on both engines" if same else "SCORES DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
