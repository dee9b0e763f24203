"""How long a student waits for ``autograder check``, against a bare ``import torch``, in one run.

    python bench/check.py [--assignment masking] [--folder DIR] [--runs 8] [--modes warm cold]

Runs ``autograder check ASSIGNMENT FOLDER`` (default: the reference, as a student who solved it) ``--runs`` times in
each mode, interleaved with a new interpreter that only imports torch: the floor, since the command and its
workers' zygote each import torch (on the two cores at once). ``warm`` is the command as shipped, ``cold`` is
``AUTOGRADER_COLD=1`` (each worker a new interpreter). Prints the mean, median and range of each, and each mode's mean
over the floor's. Run it as the user a student would be: as root, ``check`` first probes the isolation (a worker
started cold) and confines its workers with namespaces, which a student's own user does not. Not part of CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import environment

from autograder import course
from autograder.sandbox.config import COLD_ENV


def seconds(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    run = subprocess.run(argv, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if run.returncode not in (0, 1):  # 1: the check ran and some public test lost points
        raise SystemExit(f"{' '.join(argv)} failed ({run.returncode}):\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="masking")
    parser.add_argument("--folder", type=Path, help="the student's folder (default: the assignment's reference)")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--modes", nargs="+", default=["warm", "cold"], choices=["warm", "cold"])
    options = parser.parse_args()
    folder = (options.folder or course.load(options.assignment).solution_dir).resolve()
    check = [sys.executable, "-m", "autograder.cli", "check", options.assignment, str(folder)]
    floor = [sys.executable, "-c", "import torch"]
    env = {key: value for key, value in os.environ.items() if key != COLD_ENV}
    times: dict[str, list[float]] = {"import torch": [], **{mode: [] for mode in options.modes}}
    for _ in range(options.runs):
        times["import torch"].append(seconds(floor, env))
        for mode in options.modes:
            times[mode].append(seconds(check, {**env, COLD_ENV: "1" if mode == "cold" else "0"}))
    print(environment())
    print(f"autograder check {options.assignment} {folder}, as uid {os.geteuid()}, {options.runs} runs interleaved")
    base = statistics.mean(times["import torch"])
    for name, values in times.items():
        ratio = "" if name == "import torch" else f"  {statistics.mean(values) / base:.2f}x import torch"
        print(f"{name:>12}: mean {statistics.mean(values):.2f} s, median {statistics.median(values):.2f} s, "
              f"{min(values):.2f}-{max(values):.2f} s{ratio}")
    if {"warm", "cold"} <= times.keys():
        print(f"   cold/warm: {statistics.mean(times['cold']) / statistics.mean(times['warm']):.2f}x")


if __name__ == "__main__":
    main()
