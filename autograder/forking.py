"""Warm starts: a zygote that has imported what a child needs forks one per request, instead of a new interpreter
importing torch, pytest and the harness again.

A zygote serves a unix socket (``serve``): each request is a small JSON object (the child's environment) and the
file descriptors the child gets, passed with it (its stdin, its stdout and stderr, then fds 3, 4, ...: a worker's
requests and replies pipes), and the answer is the child's pid. The child is forked twice so that it is
re-parented to the process that asked (a child subreaper, see ``autograder.sandbox.become_subreaper``), which can
then wait for it like any child (``Forked``) and read how it ended. Before it runs, the child waits for the middle
process's exit (a pidfd: its re-parenting is done by then), takes a parent-death signal, closes everything else it
inherited, wipes the environment strings still in its memory and starts a session of its own.

A request may ask for a PID namespace of the child's own: the middle process enters a new one before it forks, so the
child is that namespace's PID 1, where a worker that made it itself forked again and kept a process outside
(``autograder.worker.confine``): one fork and one exit of a torch-sized process less per worker.

Before serving, the zygote freezes what it holds (``gc.freeze``): a child's garbage collections then never walk the
zygote's objects, whose headers they would write, copying every page of the heap that a fork shares (torch's and
pytest's modules; README, Instructor workflow, for what that cost).

A fork is safe only before a thread pool or a CUDA context exists: the zygote refuses to fork when its process has
a second thread or torch has initialised CUDA (``fork_ready``). The grader's processes keep OpenBLAS to one thread
(``autograder/__init__.py``), and a zygote never computes anything.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import fcntl
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable

MAX_FDS = 4  # stdin, stdout (and stderr), fd 3 and fd 4
PR_SET_PDEATHSIG = 1
CLONE_NEWPID = 0x20000000


class ForkRefused(RuntimeError):
    """Forking now could copy a thread pool or a CUDA context into the child."""


def thread_count() -> int:
    """How many threads this process runs (a fork, or a Landlock ruleset, holds only the calling one)."""
    return len(os.listdir("/proc/self/task"))


def fork_ready() -> None:
    """Raise ``ForkRefused`` unless this process is single-threaded and has no CUDA context."""
    threads = thread_count()
    if threads != 1:
        raise ForkRefused(f"this process runs {threads} threads; a forked child would inherit a broken thread pool")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        raise ForkRefused("CUDA is initialised here; a forked child could not use it")


def serve(channel: socket.socket, parent: int, child: Callable[[], None], death: int = signal.SIGKILL) -> None:
    """Fork a child for every request on ``channel`` until it closes; ``parent`` is the pid children go to, and
    ``child()`` what each runs (it must not return); ``death`` the signal a child gets when ``parent`` dies."""
    parent_fd = os.pidfd_open(parent)
    gc.collect()
    gc.freeze()  # see the module's docstring: children's collections leave the zygote's objects (and pages) alone
    while True:
        try:
            message, fds = _receive(channel)
        except (EOFError, OSError):
            os._exit(0)
        try:
            fork_ready()
            request = json.loads(message)
            answer = {"pid": _fork_twice(request["environment"], bool(request.get("pid_namespace")), fds,
                                         (parent, parent_fd), child, death)}
        except (ForkRefused, OSError, ValueError, KeyError) as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
        channel.send(json.dumps(answer).encode())


class Zygote:
    """The asking side: a zygote serving ``channel``, whose children come to this process; ``process`` is the
    zygote's own handle where it was started rather than forked."""

    def __init__(self, pid: int, channel: socket.socket, process: subprocess.Popen | None = None):
        self.pid, self.channel, self.process = pid, channel, process
        self._lock = threading.Lock()

    def spawn(self, environment: dict, fds: list[int], stdout, *, pid_namespace: bool = False) -> Forked:
        """Fork a child with ``environment`` and ``fds`` (its stdin, stdout, fd 3, ...), as PID 1 of a new PID
        namespace if ``pid_namespace``; ``stdout`` is this side's end of its output (a file object or None). Raises
        ``ForkRefused`` with the zygote's reason."""
        request = {"environment": environment, "pid_namespace": pid_namespace}
        with self._lock:
            self.channel.sendmsg([json.dumps(request).encode()],
                                 [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
            answer = json.loads(self.channel.recv(65536) or b"{}")
        if "pid" not in answer:
            raise ForkRefused(answer.get("error", "the zygote is gone"))
        return Forked(int(answer["pid"]), stdout)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.close()
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)


class Forked:
    """A child that a zygote forked for this process (re-parented to it): ``subprocess.Popen``'s ``pid``,
    ``stdout``, ``returncode``, ``poll`` and ``wait``."""

    def __init__(self, pid: int, stdout=None):
        self.pid, self.stdout, self.returncode = pid, stdout, None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                self.returncode = -signal.SIGKILL
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
            await_exit(self.pid, 1.0 if deadline is None else min(1.0, max(0.0, deadline - time.monotonic())))
        return self.returncode


def await_exit(pid: int, timeout: float) -> None:
    """Return once process ``pid`` has ended (not reaped: its parent still collects it), or after ``timeout``
    seconds: woken by the kernel (a pidfd), not by polling, which cost every stopped worker and runner a few
    milliseconds of sleep."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:  # gone already (or reaped)
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def _fork_twice(environment: dict, pid_namespace: bool, fds: list[int], parent: tuple[int, int],
                child: Callable[[], None], death: int) -> int:
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read)
        try:
            if pid_namespace:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.unshare(CLONE_NEWPID) != 0:
                    raise OSError(ctypes.get_errno(), "could not create a PID namespace")
            gone = os.pidfd_open(os.getpid())
            grandchild = os.fork()
            if grandchild == 0:
                os.close(write)
                _become(environment, fds, parent, gone, child, death)
            os.write(write, str(grandchild).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(middle, 0)
    with os.fdopen(read) as handle:
        return int(handle.read())


def _become(environment: dict, fds: list[int], parent: tuple[int, int], middle: int, child: Callable[[], None],
            death: int) -> None:
    """In the new child: belong to ``parent`` (its pid and a pidfd), take the descriptors, drop everything else,
    then run ``child``. ``middle`` is a pidfd of the process that forked it, readable once that one has exited,
    which the kernel signals after re-parenting its children: a death signal taken before then would fire at once."""
    try:
        if not select.select([middle], [], [], 5)[0]:
            os._exit(1)
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, death, 0, 0, 0)
        pid, pidfd = parent
        # Adopted by ``parent`` (0: it is outside this child's PID namespace), and alive once the signal is set.
        if os.getppid() not in (pid, 0) or select.select([pidfd], [], [], 0)[0]:
            os._exit(1)
        os.setsid()
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]  # out of the way of their targets first
        targets = [0, 1, *range(3, 1 + len(fds))]
        for target, fd in zip(targets, moved, strict=True):
            os.dup2(fd, target)
        os.dup2(moved[1], 2)
        os.closerange(max(3, targets[-1] + 1), os.sysconf("SC_OPEN_MAX"))
        _wipe_environment()
        os.environ.clear()
        os.environ.update(environment)
        child()
    finally:
        os._exit(1)


def _wipe_environment() -> None:
    """Overwrite the environment strings this process inherited: they stay in memory even once ``os.environ`` is
    replaced, and the process that forked it may hold what its child must not read."""
    libc = ctypes.CDLL(None)
    environ = ctypes.POINTER(ctypes.c_char_p).in_dll(libc, "environ")
    addresses = ctypes.cast(environ, ctypes.POINTER(ctypes.c_void_p))
    index = 0
    while environ[index] is not None:
        ctypes.memset(addresses[index], 0, len(environ[index]))
        index += 1


def _receive(channel: socket.socket) -> tuple[bytes, list[int]]:
    fds = array.array("i")
    message, ancillary, _, _ = channel.recvmsg(65536, socket.CMSG_SPACE(MAX_FDS * fds.itemsize))
    if not message:
        raise EOFError
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    if not 2 <= len(fds) <= MAX_FDS:
        for fd in fds:
            os.close(fd)
        raise ValueError(f"a request carries {len(fds)} file descriptors, not 2 to {MAX_FDS}")
    return message, list(fds)
