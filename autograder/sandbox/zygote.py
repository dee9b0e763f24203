"""The workers' zygote of a grading process (``autograder.forking``): forked first thing (``start``), before the
process reads a job or loads anything hidden, so that every worker is a copy of memory that holds only code;
``autograder.worker.zygote`` is its side. ``AUTOGRADER_COLD=1`` starts every worker as a new interpreter instead."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import socket

from autograder import forking
from autograder.sandbox.config import COLD_ENV, NAMESPACES_ENV, linux
from autograder.sandbox.reaping import LIVE, become_subreaper

ZYGOTE: forking.Zygote | None = None  # this process's worker zygote (``start``), where workers are forked


def start(plots: bool = True) -> forking.Zygote | None:
    """Fork this process's worker zygote (``autograder.forking``), once: call it first thing, before reading a job or
    loading anything hidden, since every worker is a copy of the zygote's memory. None where workers start cold:
    ``AUTOGRADER_COLD=1`` (to compare), a process that already runs a second thread (``forking.fork_ready``), or a
    system other than Linux (a zygote's children take pidfds, ``prctl`` and ``/proc``: ``Isolation.portable``).
    ``plots``: whether its workers get pyplot ready made (``autograder.worker.zygote``)."""
    global ZYGOTE
    if ZYGOTE is not None or os.environ.get(COLD_ENV) == "1" or not linux():
        return ZYGOTE
    try:
        forking.fork_ready()
    except forking.ForkRefused:
        return None
    become_subreaper()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            forking.die_with_parent()
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_DFL)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            zygote = importlib.import_module("autograder.worker.zygote")  # the student side, in the zygote only
            zygote.serve(theirs, parent, pid_namespace=_namespaces_first(), plots=plots)
        finally:
            os._exit(0)
    theirs.close()
    LIVE.add(pid)
    ZYGOTE = forking.Zygote(pid, ours)
    atexit.register(close)
    return ZYGOTE


def _namespaces_first() -> bool:
    """Whether ``Isolation.detect`` tries namespaces first (as root, unless told not to): how the worker zygote's
    first spare is forked, before this process knows its isolation."""
    return os.geteuid() == 0 and os.environ.get(NAMESPACES_ENV) != "0"


def close() -> None:
    """At exit: stop the worker zygote and collect its exit, rather than leave it to whichever subreaper adopts it."""
    global ZYGOTE
    if ZYGOTE is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(ZYGOTE.pid, signal.SIGKILL)
        ZYGOTE.close()
        LIVE.discard(ZYGOTE.pid)
        ZYGOTE = None


