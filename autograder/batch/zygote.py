"""``python -m autograder.batch.zygote``: the batch's warm start of runners (``autograder.forking``).

The batch starts it once per kind of grading (side by side or alone: OpenMP reads its wait policy when torch is
imported) and reuses it for every submission: it imports torch (its optimisers' compiler stack too), matplotlib, pytest
and the harness, and reads the assignments' public recordings (what students get), never a suite's code, a reference
or a job (each runner's workers are copies of it too); for a batch of many it moves its memory into huge pages
(``forking.collapse_memory``: cheaper forks); then it forks a runner per request. A forked runner reads its job on
stdin and grades exactly as a started one (``autograder.grading.runner.main``), its own workers' zygote forked first:
by the spare, before its request came (``forking.serve``'s ``prepare``), so a runner's start does not wait for it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys

import matplotlib

from autograder import course, forking
from autograder.grading import oracle, runner
from autograder.sandbox import zygote as worker_zygote
from autograder.sandbox.isolation import libseccomp_loads

matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402, F401 - the workers' zygote, a copy of each runner, gets it ready made
import torch  # noqa: E402


def _import_optimisers() -> None:
    """Build an optimiser once: torch's first one imports its compiler stack (hundreds of modules), which every lm
    grading paid twice (the reference's values in the runner, the student's trainer in the worker). It starts no
    thread, so the zygote can still fork."""
    torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])


def hold() -> None:
    """Load what every runner needs beyond this module's imports (``bench/forks.py`` holds the same); and libseccomp,
    which each grading's workers' zygote would otherwise look for again (an ``ldconfig`` run from a torch-sized
    process)."""
    _import_optimisers()
    libseccomp_loads()
    oracle.preload([course.load(name).expected_file for name in course.names()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channel", type=int, required=True, help="file descriptor of the batch's socket")
    parser.add_argument("--huge-pages", action="store_true",
                        help="move this process's memory into 2 MiB pages before serving (a batch of many)")
    options = parser.parse_args()
    forking.die_with_parent()
    channel = socket.socket(fileno=options.channel)
    hold()
    forking.serve(channel, os.getppid(), _run, death=signal.SIGTERM, prepare=worker_zygote.start,
                  huge_pages=options.huge_pages)


def _run() -> None:
    code = runner.main([])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
