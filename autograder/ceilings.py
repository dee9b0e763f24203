"""A memory ceiling of its own for each trusted process that reads what students hand in: the runner (one
submission's grading: staging, the static scan, written answers, the worker's replies, the reference's values) and
the batch command (discovery, the gradebook, the class report and its similarity check, which stages every
submission again). Every read of student data is bounded where it happens (``autograder.submission``,
``autograder.notebook_cells``, ``autograder.protocol``); the ceiling is for the bound we missed: the allocation that
crosses it fails (``MemoryError``, or torch's "can't allocate memory") and fails one submission's grading, not the
machine, as 90 MB of notebook in a 100 KB zip took the runner and the command past 2 GB each.

The ceiling is ``RLIMIT_DATA``: the process's heap and private writable mappings, which is where data grows; not its
code nor address space it only reserves (torch's CPU build maps about 0.6 GB of address space at import, and CUDA far
more, so ``RLIMIT_AS`` would refuse a working grader). Only the soft limit is set: a worker, started from the runner,
sets its own limits (``autograder.worker.confine``), which may be higher.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator

# The references' runners (each assignment's, on the CPU, without the runtime and retraining tests) peaked at 320 to
# 380 MB of data, about as much resident; the runner's bound leaves room for a GPU's context and a large assignment.
# The command holds every submission's results, and the similarity check every submission's fingerprints.
RUNNER_MB = 2048
COMMAND_MB = 4096


def impose(mb: int) -> int:
    """Cap this process's data at ``mb`` megabytes (the soft limit; never above the hard one); return the soft limit
    it replaced."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (mb << 20 if hard == resource.RLIM_INFINITY else min(mb << 20, hard),
                                              hard))
    return soft


@contextlib.contextmanager
def held(mb: int) -> Iterator[None]:
    """``impose`` for the block, the soft limit restored afterwards: a command run in a process that goes on (a test's)
    leaves it as it was."""
    previous = impose(mb)
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (previous, resource.getrlimit(resource.RLIMIT_DATA)[1]))
