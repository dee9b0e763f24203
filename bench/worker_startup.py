"""What a worker costs before it answers: starting it, confining it and importing a submission.

    python bench/worker_startup.py [--assignment masking] [--rounds 8]

For each isolation mode this machine offers (as root: namespaces unless refused, and permissions), the median,
min and max seconds from creating a ``Student`` proxy to its worker's reply to ``load`` (the submission is the
assignment's reference, staged as a grading stages it). Not part of CI.
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
from autograder.grading.proxy import Student
from autograder.sandbox.isolation import Isolation
from autograder.submission import stage


def startup_seconds(name: str, isolation: Isolation, rounds: int) -> list[float]:
    assignment = course.load(name)
    seconds = []
    for _ in range(rounds):
        work = Path(tempfile.mkdtemp(prefix="autograder-bench-"))
        try:
            root = stage(assignment.solution_dir, assignment.files, work, assignment.carried)
            student = Student(root, assignment.modules, assignment.limits, isolation, assignment.forbidden,
                              load_seconds=assignment.load_timeout)
            started = time.perf_counter()
            student._ensure_worker()
            seconds.append(time.perf_counter() - started)
            student.close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="masking")
    parser.add_argument("--rounds", type=int, default=8)
    options = parser.parse_args(argv)
    print(environment())
    modes = ["namespaces", "permissions"] if os.geteuid() == 0 else ["limits"]
    for mode in modes:
        os.environ["AUTOGRADER_NAMESPACES"] = "1" if mode == "namespaces" else "0"
        Isolation.detect.cache_clear()
        isolation = Isolation.detect()
        if isolation.mode != mode or isolation.problem:
            print(f"{mode}: not available here ({isolation.problem or isolation.mode})")
            continue
        seconds = startup_seconds(options.assignment, isolation, options.rounds)
        print(f"{mode}: worker start + load of the {options.assignment} reference, median "
              f"{statistics.median(seconds):.3f} s, min {min(seconds):.3f}, max {max(seconds):.3f} "
              f"(n={len(seconds)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
