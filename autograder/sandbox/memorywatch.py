"""A worker's memory, watched from outside: where the kernel does not bound it, past ``memory_mb`` it is stopped.

On Linux the worker bounds its own memory with resource limits once its imports are done (``RLIMIT_DATA`` and, off
GPU machines, ``RLIMIT_AS``, each ``memory_mb`` over what it held then: ``autograder.worker.confine.bound_memory``),
and a control group, where the grader has one, counts all its processes together. Elsewhere neither holds: macOS
accepts ``RLIMIT_AS`` and does not enforce it, and its malloc takes large blocks with ``mach_vm_allocate``, which
``RLIMIT_DATA`` does not count. So there a thread of the grading process reads the resident memory of the worker and
of every process it started (psutil: each system's own call) every ``POLL_SECONDS``, and stops them once together they
hold ``memory_mb`` more than the worker did when it was ready. It counts what is resident, not what is reserved (a
build's reservations cost nothing), and a fast allocator gets one poll's worth past the limit before it is stopped.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import psutil

POLL_SECONDS = 0.1


def killed_for_memory(memory_mb: int) -> str:
    """What a student is told when the worker's processes, together, went past ``memory_mb`` (a control group's kill,
    ``autograder.sandbox.process``, or this watch's)."""
    return (f"the process running your code, or one it started, was killed for memory: all of its processes together "
            f"may use at most {memory_mb} MB")


def resident(pid: int) -> int:
    """The resident bytes of process ``pid`` and every process it started (0 for those gone)."""
    total = 0
    with contextlib.suppress(psutil.Error):
        worker = psutil.Process(pid)
        for process in [worker, *worker.children(recursive=True)]:
            with contextlib.suppress(psutil.Error):
                total += process.memory_info().rss
    return total


class Watch:
    """Reads the memory of worker ``pid`` and what it started in a thread until ``close``; calls ``stop(reason)`` once,
    when they hold more than ``memory_mb`` over what the worker held at the start."""

    def __init__(self, pid: int, memory_mb: int, stop: Callable[[str], None]):
        self._pid, self._memory_mb, self._stop = pid, memory_mb, stop
        self._allowed = resident(pid) + (memory_mb << 20)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(POLL_SECONDS):
            if resident(self._pid) > self._allowed:
                self._stop(killed_for_memory(self._memory_mb))
                return

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
