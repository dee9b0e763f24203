"""The warm start of workers: the zygote's side (``autograder.forking``), run in a fork of the grading process that
was made first thing, before it read its job or loaded anything hidden, so that it holds only code. It imports the
student side, and forks a worker per request; each lives exactly as a started one does (``run``: spec,
confinement, traps, calls) on its pipes at fds 3 and 4.
"""

from __future__ import annotations

import signal
import socket

import torch  # noqa: F401 - imported once here, so that no worker pays for it

from autograder import forking
from autograder.worker.__main__ import run

REQUESTS, REPLIES = 3, 4


def serve(channel: socket.socket, parent: int, pid_namespace: bool, plots: bool = True) -> None:
    """Fork a worker for every request on ``channel``; ``parent``, the grading process, becomes its parent;
    ``pid_namespace``: whether the first is likely to want a PID namespace of its own (it is forked ahead);
    ``plots``: whether to import matplotlib's pyplot first, for notebooks that plot (a third of this zygote's
    imports, which a student's ``check`` of an assignment without notebooks would wait for)."""
    if plots:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    forking.serve(channel, parent, lambda: run(REQUESTS, REPLIES), death=signal.SIGKILL, pid_namespace=pid_namespace)
