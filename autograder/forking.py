"""Warm starts: a zygote that has imported what a child needs forks one per request, instead of a new interpreter
importing torch, pytest and the harness again. Each side that keeps one names it for itself: the workers' zygote of a
grading process (``autograder.sandbox.zygote``, its side in ``autograder.worker.zygote``) and the runners' zygote of
a batch (``autograder.batch.zygote``). This module is the mechanism they share, shared with the untrusted side too,
and one piece past 450 lines on purpose: the request, the double fork, the spare and the reaping of what forks leave
are one protocol whose steps depend on each other's order, and splitting them would spread that order over files.

A zygote serves a unix socket (``serve``): each request is a small JSON object (the child's environment) and the
file descriptors the child gets, passed with it (its stdin, its stdout and stderr, then fds 3, 4, ...: a worker's
requests and replies pipes), and the answer is the child's pid. The child is forked twice so that it is
re-parented to the process that asked (a child subreaper, see ``autograder.sandbox.reaping.become_subreaper``), which
can then wait for it like any child (``Forked``) and read how it ended. Once the middle process has exited (a pidfd: the
kernel has re-parented the child by then), the child takes a parent-death signal and closes everything else it
inherited; once handed its request, it wipes the environment strings still in its memory and starts a session of
its own.

The child is forked ahead of its request, a spare: two forks of a torch-sized process and the middle one's exit
(about 35 ms here) happen while the asker stages, loads or runs tests, not while it waits (Android's zygote keeps
such a pool, for the same reason). A request hands the spare its environment and descriptors over a socket of its
own, and the next spare is forked after the answer. Until handed one, a spare is a child of the asker in the
zygote's session, which no student process can enter (a worker starts a session of its own before it runs any), so
the asker tells its zygotes' spares from a student's leftovers (``spares``). A spare that is gone by the time a
request comes (killed) costs one fork, as before.

A request may ask for a PID namespace of the child's own: the middle process enters a new one before it forks, so the
child is that namespace's PID 1, where a worker that made it itself forked again and kept a process outside
(``autograder.worker.confine``): one fork and one exit of a torch-sized process less per worker. The spare is forked
as the last request asked (the first one, as ``serve`` is told).

Before serving, the zygote freezes what it holds (``gc.freeze``): a child's garbage collections then never walk the
zygote's objects, whose headers they would write, copying every page of the heap that a fork shares (torch's and
pytest's modules; docs/performance.md, for what that cost).

A fork copies one page-table entry per 4 KiB page of the zygote's private memory, and each exit frees them: with
torch, pytest and the harness imported, that is most of a fork's cost, and it is in the kernel. The runner zygote of
a batch of many, whose memory is copied several times per submission (a runner, its workers' zygote, their spares),
first asks the kernel to move that memory into 2 MiB pages (``collapse_memory``, ``serve(huge_pages=True)``): one
entry each. A child's first write to such a page splits it back into 4 KiB entries (copying the one page it writes),
so a child pays only for what it touches. The move copies the memory once, which a lone submission would wait for, and
a workers' zygote, forked per grading from a runner, keeps the pages it inherits as they are (docs/performance.md
for the figures).

A fork is safe only before a thread pool or a CUDA context exists: the zygote refuses to fork when its process has
a second thread or torch has initialised CUDA (``fork_ready``). The grader's processes keep OpenBLAS to one thread
(``autograder/__init__.py``), and a zygote never computes anything. On an H100, ``torch.cuda.is_available()`` alone
already broke a fork ("Cannot re-initialize CUDA in forked subprocess" in the child) while ``is_initialized()`` stayed
False, which ``fork_ready`` cannot see: so a process that forks never asks, and a runner asks (``grading_device``, the
tests' ``device``) only after forking its workers' zygote.
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
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

MAX_FDS = 4  # stdin, stdout (and stderr), fd 3 and fd 4
HUGE_PAGE = 2 << 20
MADV_COLLAPSE = 25  # Linux 6.1
PR_SET_PDEATHSIG = 1
CLONE_NEWPID = 0x20000000


def die_with_parent(signum: int = signal.SIGKILL) -> None:
    """Have the kernel send ``signum`` to this process when the thread that started it ends (Linux's parent-death
    signal; a new uid clears it, so a process that changes uid asks again)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)


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


def collapse_memory() -> int:
    """Back this process's private anonymous memory (its heap and unnamed mappings) with 2 MiB pages where the kernel
    can, and return how many bytes are in such pages now. ``MADV_COLLAPSE`` does it at once, whatever the system's
    transparent huge page setting; an older kernel, or a range it cannot move, refuses with an error, and the memory
    stays as it was (only the forks' cost differs)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for line in Path("/proc/self/maps").read_text().splitlines():
        address, permissions, *rest = line.split()
        name = rest[3] if len(rest) > 3 else ""
        if permissions != "rw-p" or name not in ("", "[heap]"):
            continue
        start, end = (int(bound, 16) for bound in address.split("-"))
        start, end = -(-start // HUGE_PAGE) * HUGE_PAGE, end // HUGE_PAGE * HUGE_PAGE
        if end > start:
            libc.madvise(start, end - start, MADV_COLLAPSE)
    return rollup_bytes(os.getpid(), "AnonHugePages")


def rollup_bytes(pid: int, field: str) -> int:
    """The bytes process ``pid``'s ``/proc/PID/smaps_rollup`` counts under ``field`` ("Anonymous", "AnonHugePages",
    ...); 0 where it has no such line."""
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    return 0


class _Children(NamedTuple):
    """What ``serve`` was told about its children: the pid they go to and a pidfd of it, what each runs, the signal
    it gets when that process dies, and what a spare does before its request comes."""

    parent: int
    parent_fd: int
    child: Callable[[], None]
    death: int
    prepare: Callable[[], None] | None


def serve(channel: socket.socket, parent: int, child: Callable[[], None], death: int = signal.SIGKILL, *,
          pid_namespace: bool = False, prepare: Callable[[], None] | None = None, huge_pages: bool = False) -> None:
    """Fork a child for every request on ``channel`` until it closes; ``parent`` is the pid children go to, and
    ``child()`` what each runs (it must not return); ``death`` the signal a child gets when ``parent`` dies;
    ``pid_namespace`` whether the first spare is forked into a PID namespace of its own; ``prepare()`` what a spare
    does once adopted, before it reads its request (nothing a request could change: a runner forks its workers'
    zygote, ``autograder.batch.zygote``); ``huge_pages``: whether to move this process's memory into 2 MiB pages
    first (``collapse_memory``), for a zygote that serves a whole batch."""
    children = _Children(parent, os.pidfd_open(parent), child, death, prepare)
    gc.collect()
    gc.freeze()  # see the module's docstring: children's collections leave the zygote's objects (and pages) alone
    if huge_pages:
        collapse_memory()
    spare = _ahead(pid_namespace, children)
    while True:
        try:
            message, fds = _receive(channel)
        except (EOFError, OSError):
            os._exit(0)
        wanted = None
        try:
            request = json.loads(message)
            wanted = bool(request.get("pid_namespace"))
            environment = json.dumps(request["environment"]).encode()
            if spare is not None and (spare.pid_namespace != wanted or not spare.hand(environment, fds)):
                spare.drop()
                spare = None
            if spare is None:
                spare = _fork_spare(wanted, children)
                if not spare.hand(environment, fds):
                    raise OSError("the child forked for this request ended before it was handed it")
            answer = {"pid": spare.pid}
        except (ForkRefused, OSError, ValueError, KeyError) as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            for fd in fds:
                os.close(fd)
            if spare is not None:
                spare.drop()  # handed its request, or of no use for it
                spare = None
        channel.send(json.dumps(answer).encode())
        if wanted is not None:
            spare = _ahead(wanted, children)


def spares(zygotes: set[Zygote] | None = None, *, ended: bool = False) -> set[int]:
    """This process's children that its zygotes (or ``zygotes``) forked ahead and have not handed a request yet
    (module docstring): alive and in a zygote's session; with ``ended``, those that have exited too (to collect)."""
    zygotes = SERVING if zygotes is None else zygotes
    sessions = {zygote.session for zygote in zygotes}
    found = {pid for pid, (state, session) in _children(sessions).items()
             if session in sessions and (ended or state != "Z")}
    return found - {zygote.pid for zygote in zygotes}


def reap_ended(zygotes: set[Zygote], keep: set[int]) -> None:
    """Collect this process's children in ``zygotes``' sessions that have exited, but ``keep`` (children whose exit
    is someone's to read): what a runner forked ahead leaves (its workers' zygote and that one's spare, killed as it
    exits and re-parented here), which otherwise waited as zombies until the batch ended, one or two per submission."""
    sessions = {zygote.session for zygote in zygotes}
    for pid, (state, session) in _children(sessions).items():
        if state == "Z" and session in sessions and pid not in keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def stat_fields(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name, which may hold spaces and parentheses: ``[0]`` the
    state (R, S, Z, ...), ``[1]`` the parent, ``[2]`` the process group, ``[3]`` the session. Raises ``OSError``
    when the process is gone."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def _children(sessions: set[int]) -> dict[int, tuple[str, int]]:
    """This process's children (none to look for where ``sessions`` is empty): their state and session."""
    found = {}
    for pid in child_pids() if sessions else ():
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat_fields(pid)
            found[pid] = (fields[0], int(fields[3]))
    return found


def child_pids() -> set[int]:
    """The pids of this process's children, from each of its threads' list in /proc (psutil's way reads every
    process's status on the machine: milliseconds, twice for every worker started and stopped)."""
    try:
        return {int(pid) for task in os.scandir("/proc/self/task")
                for pid in Path(task.path, "children").read_text().split()}
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN
        import psutil

        return {child.pid for child in psutil.Process().children()}


class Zygote:
    """The asking side: a zygote serving ``channel``, whose children come to this process; ``process`` is the
    zygote's own handle where it was started rather than forked."""

    def __init__(self, pid: int, channel: socket.socket, process: subprocess.Popen | None = None):
        self.pid, self.channel, self.process = pid, channel, process
        self.session = -1
        with contextlib.suppress(OSError):  # gone already: it forked nothing
            self.session = os.getsid(pid)
        self._lock = threading.Lock()
        SERVING.add(self)

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
        """Close the channel: the zygote exits, and its spare (which then reads the end of its socket); collect both,
        whether the zygote was killed first or not."""
        left = spares({self}, ended=True)
        SERVING.discard(self)
        with contextlib.suppress(OSError):
            self.channel.close()
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)
        for pid in left:
            await_exit(pid, 2.0)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


SERVING: set[Zygote] = set()  # this process's zygotes, whose spares ``spares`` finds


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
    except AttributeError:  # no pidfds (not Linux): the caller polls, as it reaps
        time.sleep(min(timeout, 0.01))
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


class _Spare:
    """A child forked ahead of its request, adopted by the asker, waiting on ``link`` for its request."""

    def __init__(self, pid: int, link: socket.socket, pid_namespace: bool):
        self.pid, self.link, self.pid_namespace = pid, link, pid_namespace

    def hand(self, environment: bytes, fds: list[int]) -> bool:
        """Send the child its environment (JSON) and descriptors; False where it is gone."""
        try:
            self.link.sendmsg([environment], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        except OSError:
            return False
        return True

    def drop(self) -> None:
        """Close this side: a spare that was not handed a request exits on the end of its socket."""
        self.link.close()


def _ahead(pid_namespace: bool, children: _Children) -> _Spare | None:
    """The next spare, or None where it cannot be forked now (the request then forks, and says why)."""
    try:
        return _fork_spare(pid_namespace, children)
    except (ForkRefused, OSError, ValueError):
        return None


def _fork_spare(pid_namespace: bool, children: _Children) -> _Spare:
    fork_ready()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
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
                _wait(theirs, gone, children)
            os.write(write, str(grandchild).encode())
        finally:
            os._exit(0)
    theirs.close()
    os.close(write)
    os.waitpid(middle, 0)
    with os.fdopen(read) as handle:
        answer = handle.read()
    if not answer.isdigit():
        ours.close()
        raise OSError("could not fork a child" + (" in a PID namespace of its own" if pid_namespace else ""))
    return _Spare(int(answer), ours, pid_namespace)


def _wait(link: socket.socket, middle: int, children: _Children) -> None:
    """In the spare: belong to the parent ``children`` names, close what the zygote holds, prepare, wait on ``link``
    for a request, then become its child. ``middle`` is a pidfd of the process that forked it, readable once that one
    has exited, which the kernel signals after re-parenting its children: a death signal taken before then would
    fire at once."""
    try:
        if not select.select([middle], [], [], 5)[0]:
            os._exit(1)
        die_with_parent(children.death)
        # Adopted by the parent (0: it is outside this child's PID namespace), and alive once the signal is set.
        if os.getppid() not in (children.parent, 0) or select.select([children.parent_fd], [], [], 0)[0]:
            os._exit(1)
        keep = link.fileno()  # the zygote's channel among the rest: its asker would not see it close
        os.closerange(3, keep)
        os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))
        if children.prepare is not None:
            children.prepare()
        prepared = _open_fds() - {0, 1, 2, keep}
        try:
            message, fds = _receive(link)
        except (EOFError, OSError, ValueError):  # the zygote is gone, or the request is not one
            os._exit(0)
        _become(json.loads(message), fds, children.child, prepared)
    finally:
        os._exit(1)


def _become(environment: dict, fds: list[int], child: Callable[[], None], prepared: set[int]) -> None:
    """In the spare handed a request: take the descriptors, drop everything else but what ``prepared`` opened (the
    zygote's were closed before), then run ``child``. What ``child`` raises is printed on its stderr (its stdout) before
    it exits, as a started interpreter would print it: a runner's log is where staff look for why it died."""
    try:
        os.setsid()
        targets = [0, 1, *range(3, 1 + len(fds))]
        if prepared & set(targets):
            os._exit(1)
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100) for fd in fds]  # out of the way of their targets first
        for target, fd in zip(targets, moved, strict=True):
            os.dup2(fd, target)
        os.dup2(moved[1], 2)
        for fd in _open_fds() - {0, 1, 2, *targets} - prepared:  # the request's originals and copies, the socket
            os.close(fd)
        _wipe_environment()
        os.environ.clear()
        os.environ.update(environment)
        child()
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        os._exit(1)


def _open_fds() -> set[int]:
    """This process's open descriptors (not the one that listed them, closed by then)."""
    found = set()
    for name in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            fcntl.fcntl(int(name), fcntl.F_GETFD)
            found.add(int(name))
    return found


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
