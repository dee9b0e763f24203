"""What a fork of the batch's runner zygote costs, with its memory in 4 KiB pages and in 2 MiB pages, in one run.

    python bench/forks.py [--forks 40] [--touch-mb 0 16]

Loads what ``autograder.batch.zygote`` holds (torch, pytest, matplotlib, the harness, torch's optimisers, the
public recordings), then times ``--forks`` forks whose child writes ``--touch-mb`` megabytes of the inherited heap
(0: exits at once; a runner writes some of what it inherited: each write splits a huge page back and copies one
4 KiB page) and exits, the parent waiting for it. It prints the wall and CPU (the parent's and the children's, most
of it in the kernel) per fork, before and after ``forking.collapse_memory``, and their ratio. Not part of CI.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time

from common import environment

from autograder import forking
from autograder.batch import zygote


def per_fork(forks: int, touch: bytearray, megabytes: int) -> tuple[float, float]:
    """Wall and CPU seconds per fork, exit and wait; the child writes a byte in each 4 KiB page of its first
    ``megabytes`` of ``touch``."""
    pages = range(0, megabytes << 20, 4096)
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            for offset in pages:
                touch[offset] = 1
            os._exit(0)
        os.waitpid(pid, 0)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before, strict=True))
    return wall / forks, cpu / forks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forks", type=int, default=40)
    parser.add_argument("--touch-mb", type=int, nargs="+", default=[0, 16])
    options = parser.parse_args(argv)
    print(environment())
    zygote.hold()
    touch = bytearray(max(options.touch_mb) << 20)  # memory the children write, held like the rest
    gc.collect()
    gc.freeze()
    print(f"the zygote's anonymous memory: {forking.rollup_bytes(os.getpid(), 'Anonymous') / 2**20:.0f} MB")
    small = {megabytes: per_fork(options.forks, touch, megabytes) for megabytes in options.touch_mb}
    started = time.perf_counter()
    huge = forking.collapse_memory()
    print(f"collapse_memory: {huge / 2**20:.0f} MB in 2 MiB pages, in {time.perf_counter() - started:.2f} s")
    for megabytes in options.touch_mb:
        wall, cpu = per_fork(options.forks, touch, megabytes)
        print(f"child writes {megabytes} MB: 4 KiB pages {small[megabytes][0] * 1000:.1f} ms wall, "
              f"{small[megabytes][1] * 1000:.1f} ms CPU per fork; 2 MiB pages {wall * 1000:.1f} ms wall, "
              f"{cpu * 1000:.1f} ms CPU ({small[megabytes][1] / cpu:.2f}x less CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
