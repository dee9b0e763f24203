"""Reaping what workers leave: the grading process is a child subreaper (``become_subreaper``), so a student's
double-forked process, or a worker whose parent was killed, is re-parented to it and killed and reaped here
(``reap_children``) rather than passed on as a zombie; ``LIVE`` holds the pids this process started and has not
stopped."""

from __future__ import annotations

import contextlib
import ctypes
import os
import time

from autograder import forking

PR_SET_CHILD_SUBREAPER = 36
LIVE: set[int] = set()  # the pids of the workers (and the worker zygote) this process started and has not stopped


def become_subreaper() -> None:
    """Make orphaned descendants re-parent to this process (Linux), so they can be reaped."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _user_task_count() -> int:
    """Processes and threads the current user owns (RLIMIT_NPROC counts both)."""
    import psutil

    uid, count = os.getuid(), 0
    for process in psutil.process_iter(["uids", "num_threads"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if process.info["uids"].real == uid:
                count += process.info["num_threads"]
    return count


def _reap_adopted(pid: int, seconds: float = 5.0) -> None:
    """Collect the exit of a killed worker in a PID namespace: its parent outside exits first, and it is re-parented
    to this subreaper; left unreaped it would pass on as a zombie to whichever subreaper outlives this process."""
    deadline = time.monotonic() + seconds
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(pid, os.WNOHANG)[0] == 0 and time.monotonic() < deadline:
            forking.await_exit(pid, max(0.0, deadline - time.monotonic()))
            time.sleep(0.001)  # it has ended: its adoption here follows its parent's exit


def reap_children(spared: set[int], seconds: float = 5.0) -> None:
    """Kill and reap every child of this subreaper but ``spared``, and what they started, until none is left (or
    ``seconds`` pass): a student's double-forked process, or a worker whose parent was killed, is re-parented here
    a moment after its parent dies; left unreaped it would pass on as a zombie to whichever subreaper outlives us."""
    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        kept = spared | forking.spares()  # a zygote's spare is a child too, until it is handed a request
        if not forking.child_pids() - kept:
            return
        children = []
        with contextlib.suppress(psutil.Error):
            children = [child for child in psutil.Process().children() if child.pid not in kept]
        for child in children:
            with contextlib.suppress(psutil.Error):
                for process in [*child.children(recursive=True), child]:
                    process.kill()
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child.pid, os.WNOHANG)
        time.sleep(0.02)


