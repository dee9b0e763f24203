"""How OpenMP's threads wait, against the lm reference's pretraining: wall time and CPU time, idle and oversubscribed.

    python bench/openmp_wait.py [--epochs 60] [--hogs 0 4] [--repeats 2]

Each setting pretrains the reference (the grader's "cpu" preset, on 2 threads as the worker does) for ``--epochs``
epochs of the retraining world, in a fresh process, ``--repeats`` times, with ``--hogs`` CPU-bound processes running
beside it (0: an idle machine). The settings: ``passive`` (OMP_WAIT_POLICY=PASSIVE alone: a thread sleeps as soon as
it waits), ``runners`` (what every grading gets, ``autograder.batch.runners.OPENMP``: a short spin, then sleep) and
``active`` (OMP_WAIT_POLICY=ACTIVE: spin until the work comes). Prints each run's wall seconds and CPU seconds (user
and system, what the retraining's budgets count), then the median of each against ``passive``'s, measured in the
same run. What to look for: ``runners`` faster than ``passive`` on an idle machine at no more CPU time, and its CPU
time close to ``passive``'s when the machine is oversubscribed (where ``active`` multiplies it).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import textwrap
import time

from common import environment

from autograder import course
from autograder.batch.runners import OPENMP

SETTINGS = {
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "runners": OPENMP,
    "active": {"OMP_WAIT_POLICY": "ACTIVE"},
}
PRETRAIN = textwrap.dedent("""
    import sys, torch
    torch.set_num_threads(2)
    sys.path.insert(0, {solution!r})
    from autograder.suites.lm.world import SIZES, generate_world
    import dataset, run
    world = generate_world("lm-retraining:21", **SIZES["retraining"])
    corpus = "".join(f"{{line}}\\n" for line in world.bios)
    model = run.build_model("vanilla", dataset.Vocabulary(corpus).size, "cpu", seed=0)
    run.pretrain(model, corpus, "cpu", seed=0, progress=False, max_epochs={epochs})
""")
SPIN = "while True:\n    pass"


def measure(setting: str, epochs: int) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user and system, every thread) of one pretraining under ``setting``."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(SETTINGS[setting])
    code = PRETRAIN.format(solution=str(course.REPO_ROOT / "solutions" / "lm"), epochs=epochs)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--hogs", type=int, nargs="+", default=[0, 2 * (os.cpu_count() or 1)])
    parser.add_argument("--repeats", type=int, default=2)
    options = parser.parse_args(argv)
    print(environment(), flush=True)
    for count in options.hogs:
        # each hog in a session of its own: with the kernel's autogroups, hogs of one session weigh as one process
        hogs = [subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True) for _ in range(count)]
        try:
            figures = {setting: [] for setting in SETTINGS}
            for repeat in range(options.repeats):
                for setting in SETTINGS:  # interleaved, so that a change of load weighs on every setting alike
                    wall, cpu = measure(setting, options.epochs)
                    figures[setting].append((wall, cpu))
                    print(f"{count} hogs, {setting:8s} run {repeat + 1}: {wall:6.1f} s wall, {cpu:6.1f} CPU-s",
                          flush=True)
        finally:
            for hog in hogs:
                hog.kill()
        base_wall, base_cpu = (statistics.median(f[i] for f in figures["passive"]) for i in (0, 1))
        for setting, runs in figures.items():
            wall, cpu = (statistics.median(f[i] for f in runs) for i in (0, 1))
            print(f"{count} hogs, {setting:8s} median: {wall:6.1f} s wall ({wall / base_wall:.2f}x passive), "
                  f"{cpu:6.1f} CPU-s ({cpu / base_cpu:.2f}x)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
