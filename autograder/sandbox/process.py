"""Starting, talking to and stopping the worker process that runs student code (``Sandbox``).

The grader prepares what a worker may use: its own private folder (TMPDIR, and the mount point of its root), and as
root a uid of its own (``autograder.sandbox.permissions``) to which the submission's staged copy is handed with mode
0700. Nothing about the submission reaches the worker's command line or environment: its spec, the confinement plan
included, is its first message on the requests pipe.

Stopping a worker kills the process the grader started, the worker it forked (PID 1 of its namespace: everything it
started dies with it), every process of its uid (all of its control group's, ``autograder.sandbox.cgroups``), and, for
the grading process is a child subreaper, any descendant a student's double fork re-parented to it; the worker itself
dies with the grading process (a parent-death signal).

Without Linux's layers (``Isolation.portable``: macOS, or ``check`` under ``AUTOGRADER_LINUX=0``) a worker is always a
new interpreter (warm starts fork a zygote, which takes pidfds and ``/proc``), its memory is watched from outside
(``autograder.sandbox.memorywatch``), stopping it kills the processes it started by name (psutil) before it, for no
subreaper collects them, and a worker that dies is seen when its pipe closes (no pidfd).

A request may also carry a CPU-time limit (``cpu_limit``): the worker's processes together (``cpu_seconds``: every
thread, and the children they have waited for) may use that much CPU time, and the worker is stopped once they have
(``OverCpuTime``). Wall-clock deadlines depend on whatever else the machine runs; a CPU-time limit does not, so a budget
that decides points is a CPU-time one (the lm retraining's), and the deadline beside it only a generous safety net."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from autograder import forking, protocol, scratch
from autograder.sandbox import cgroups, diskwatch, memorywatch, permissions
from autograder.sandbox import zygote as workers
from autograder.sandbox.capture import OutputCapture
from autograder.sandbox.config import Limits
from autograder.sandbox.reaping import LIVE, _reap_adopted, _user_task_count, become_subreaper, reap_children

if TYPE_CHECKING:
    from autograder.sandbox.isolation import Isolation

START_SECONDS = 120.0  # for the worker to confine itself and import torch (seconds on an idle machine)
CPU_POLL_SECONDS = 0.25  # how often a request with a CPU-time limit reads the worker's CPU time


@dataclass
class WorkerDied(Exception):
    """The worker exited or was killed while the parent waited for an answer."""

    returncode: int | None
    output: str = ""
    cause: str = ""  # what the grader knows of why it died (its control group's memory, what it wrote to disk)
    container: bool = False  # killed for the memory of the container the grader runs in: not the submission's doing

    def describe(self) -> str:
        code = self.returncode
        if self.cause:
            return self.cause
        if code is None:
            return "the worker stopped responding"
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            hints = {
                "SIGKILL": "it was killed (memory limit, or a timeout)",
                "SIGXCPU": "it used up its CPU-time limit",
                "SIGXFSZ": "it wrote a file larger than the limit",
                "SIGSEGV": "it crashed (segmentation fault)",
            }
            return f"the process running your code died from {name}: {hints.get(name, 'it crashed')}"
        return (f"the process running your code exited with status {code} "
                "(sys.exit or os._exit in your code? graded code must return, not exit)")


class OverCpuTime(protocol.ReadTimeout):
    """The worker's processes used the CPU time a request allowed (``Sandbox.request``'s ``cpu_limit``)."""


class SandboxError(Exception):
    """A worker could not be started or confined: the grader's problem, never the submission's."""



class Sandbox:
    """One worker process for the staged submission in ``root``."""

    start_seconds = START_SECONDS  # the handshake's deadline

    def __init__(self, root: Path, spec: dict, limits: Limits, isolation: Isolation, *, probe: bool = False):
        self.root = Path(root)
        self.spec = dict(spec, threads=limits.threads, probe=probe)
        self.limits = limits
        self.isolation = isolation
        self.process: subprocess.Popen | forking.Forked | None = None
        self.capture: OutputCapture | None = None
        self.lease: permissions.UidLease | None = None
        self.group: cgroups.Group | None = None
        self.disk: diskwatch.Watch | None = None
        self.memory: memorywatch.Watch | None = None  # without Linux's layers only
        self.stopped_for = ""  # why the disk watch (or the memory watch) stopped the worker
        self.private: Path | None = None
        self.worker_pid: int | None = None
        self.elders: set[int] = set()
        self.answer: dict = {}
        self._requests = self._replies = self._exited = -1  # _exited: a pidfd of the worker, where the kernel has them

    # ------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start and confine the worker; ``SandboxError`` when that fails (``answer`` holds the worker's handshake)."""
        if self.isolation.problem:
            raise SandboxError(self.isolation.problem)
        become_subreaper()  # a worker in a PID namespace outlives its parent outside it, and is re-parented here
        self.elders = forking.child_pids()  # this process's own (a caller's, the probe's): never the student's to reap
        self._container_kills_before = cgroups.container_kills()
        self.private = scratch.make("worker")
        (self.private / "tmp").mkdir()
        (self.private / "rootfs").mkdir()
        if self.isolation.privileged:
            self.lease = permissions.UidLease()
            permissions.hand_over(self.root, self.lease.uid)
            os.chown(self.private / "tmp", self.lease.uid, self.lease.uid)
            os.chmod(self.private, 0o711)
        if self.isolation.cgroups:
            try:
                self.group = cgroups.Group.make(self.isolation.cgroups, self.limits.memory_mb, self.limits.processes)
            except OSError as exc:
                raise SandboxError(f"could not make the worker's control group: {exc} (AUTOGRADER_CGROUPS=0 grades "
                                   "without them)") from None
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            warm = workers.ZYGOTE is not None and not self.spec["probe"] and self.isolation.linux
            self.process = self._fork(req_r, rep_w) if warm else None
        except forking.ForkRefused:
            self.process = None
        if self.process is None:
            argv = [sys.executable, "-I", "-B", "-m", "autograder.worker", "--requests", str(req_r), "--replies",
                    str(rep_w)]
            self.process = subprocess.Popen(
                argv, cwd=self.private, env=self._environment(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, pass_fds=(req_r, rep_w), start_new_session=True, close_fds=True,
            )
        LIVE.add(self.process.pid)
        os.close(req_r)
        os.close(rep_w)
        self._requests, self._replies = req_w, rep_r
        self.capture = OutputCapture(self.process.stdout, self.limits.output_bytes)
        self._handshake()
        if self.group is not None:
            with contextlib.suppress(OSError):  # refused: the group keeps memory_mb in all, stricter
                self.group.allow_more(((self.limits.memory_mb + cgroups.HEADROOM_MB) << 20) + self._private())
        # A worker that dies is seen at once, whatever it left holding its pipe (a pidfd: Linux's; elsewhere, the
        # pipe's end).
        with contextlib.suppress(OSError, AttributeError):
            self._exited = os.pidfd_open(self.pid)
        self.disk = diskwatch.Watch([self.root, self.private / "tmp"], self.limits.tmp_mb, self._stop_for,
                                    self._processes)
        if not self.isolation.linux:
            self.memory = memorywatch.Watch(self.pid, self.limits.memory_mb, self._stop_for)

    def _private(self) -> int:
        """The worker's private memory when it was ready, in bytes: its data limit less ``memory_mb`` (the handshake's,
        sent before any student file ran); 0 where it set none."""
        try:
            private = int(self.answer.get("memory", {}).get("RLIMIT_DATA", 0)) - (self.limits.memory_mb << 20)
        except (AttributeError, TypeError, ValueError):
            return 0
        return min(max(private, 0), 1 << 40)

    def _processes(self) -> list[int]:
        """The worker's processes: its control group's, else its uid's (orphans included), else its descendants."""
        import psutil

        if self.group is not None:
            return self.group.pids()
        if self.lease is not None:
            return permissions.processes_of(self.lease.uid)
        with contextlib.suppress(psutil.Error):
            worker = psutil.Process(self.pid)
            return [worker.pid, *(child.pid for child in worker.children(recursive=True))]
        return []

    def _stop_for(self, reason: str) -> None:
        """The disk watch's and the memory watch's ``stop``, in its thread: kill the worker and what it started
        (``kill`` collects them)."""
        self.stopped_for = reason
        self._kill_processes()
        if self.lease is not None:
            self.lease.kill_all()

    def _fork(self, requests: int, replies: int) -> forking.Forked:
        """A worker forked by this process's zygote, on the same pipes a started one gets."""
        out_r, out_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            forked = workers.ZYGOTE.spawn(self._environment(), [devnull, out_w, requests, replies], None,
                                  pid_namespace=self.isolation.mode == "namespaces")  # see _forked_into_namespace
        except BaseException:
            os.close(out_r)
            raise
        finally:
            os.close(devnull)
            os.close(out_w)
        forked.stdout = os.fdopen(out_r, "rb")
        return forked

    def plan(self) -> dict:
        """The confinement the worker applies to itself (``autograder.worker.confine``)."""
        limits = asdict(self.limits)
        if self.lease is None:  # the worker shares the user's process count: allow what exists plus the limit
            limits["processes"] = self.limits.processes + _user_task_count()
        return {"mode": self.isolation.mode, "uid": self.lease.uid if self.lease else None,
                "landlock": self.isolation.landlock, "seccomp": self.isolation.seccomp,
                "cgroups": self.group.procs() if self.group else [],
                "init": self._forked_into_namespace(), "linux": self.isolation.linux,
                "workdir": str(self.root), "tmpdir": str(self.private / "tmp"),
                "rootfs": str(self.private / "rootfs"), "tmp_mb": self.limits.tmp_mb, "limits": limits}

    def _forked_into_namespace(self) -> bool:
        """Whether the worker is already PID 1 of a PID namespace of its own (forked there by the zygote)."""
        return isinstance(self.process, forking.Forked) and self.isolation.mode == "namespaces"

    def _handshake(self) -> None:
        protocol.write_frame(self._requests, {**self.spec, "confine": self.plan()}, [])
        deadline = time.monotonic() + self.start_seconds
        try:
            answer, _ = protocol.read_frame(self._replies, deadline)
            if "pid" in answer:  # every mode reports the pid first (``confine.apply``) unless it failed before
                self.worker_pid = None if answer["pid"] is None else int(answer["pid"])
                answer, _ = protocol.read_frame(self._replies, deadline)
            elif answer.get("ready") is not False:
                raise protocol.ProtocolError(f"the handshake began with {sorted(answer)}, not the worker's pid")
        except (protocol.ProtocolError, protocol.ReadTimeout, OSError, ValueError, TypeError) as exc:
            self.kill()
            raise SandboxError(f"the worker did not start ({type(exc).__name__}: {exc}); its output: "
                               f"{self.output_tail(500)!r}") from None
        self.answer = answer
        if not answer.get("ready"):
            self.kill()
            raise SandboxError(f"the worker could not confine itself: {answer.get('error', 'no reason given')}")

    def _environment(self) -> dict:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "OMP_NUM_THREADS": str(self.limits.threads),
            "MKL_NUM_THREADS": str(self.limits.threads),
            "MPLBACKEND": "Agg",
            "TQDM_DISABLE": "1",
        }
        # The kernel level an instructor pins (ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS) holds for student code too.
        # How OpenMP's threads wait is the runner's (autograder.batch.runners.OPENMP).
        for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "OMP_WAIT_POLICY",
                     "GOMP_SPINCOUNT", "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"):
            if name in os.environ:
                env[name] = os.environ[name]
        return env

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        """The worker's pid as this process sees it (the confined process, where it forked into a namespace)."""
        return self.worker_pid or (self.process.pid if self.process else None)

    def cpu_seconds(self) -> float:
        """The CPU time (user and system) the worker's processes have used: every thread of each, and the children
        each has waited for; a process that has ended and not been waited for is not counted."""
        import psutil

        total = 0.0
        for pid in self._processes():
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(pid).cpu_times()
                total += times.user + times.system + times.children_user + times.children_system
        return total

    def request(self, header: dict, blobs: list[bytes], deadline: float, max_bytes: int | None = None,
                cpu_limit: float | None = None) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply, of at most ``max_bytes`` (by default the worker's memory),
        until ``deadline`` (monotonic seconds), and while ``cpu_seconds`` stays within ``cpu_limit``.

        Raises ``protocol.ReadTimeout`` (the worker is killed first; ``OverCpuTime`` past ``cpu_limit``),
        ``WorkerDied`` or ``protocol.ProtocolError`` (``TooLarge``: the reply is over ``max_bytes``; the worker is
        killed, its reply unread).
        """
        try:
            protocol.write_frame(self._requests, header, blobs)
            if cpu_limit is not None:
                self._await_reply(deadline, cpu_limit)
            reply, reply_blobs = protocol.read_frame(self._replies, deadline,
                                                     max_bytes=max_bytes or self.limits.memory_mb << 20,
                                                     watch=None if self._exited < 0 else self._exited)
            if not isinstance(reply.get("ok"), bool) or not (reply["ok"] or isinstance(reply.get("error"), dict)):
                raise protocol.ProtocolError(f"a reply with {sorted(reply)[:8]}, neither an answer nor an error")
            return reply, reply_blobs
        except protocol.ReadTimeout:
            self.kill()
            raise
        except (protocol.PeerClosed, BrokenPipeError):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=2)  # it is exiting: its own status says how (where it forked, the copy's)
            self.kill()
            container = self._container_killed()
            cause = cgroups.CONTAINER_OUT_OF_MEMORY if container else self._cause()
            raise WorkerDied(self.process.returncode, self.output_tail(), cause, container) from None
        except protocol.ProtocolError:
            self.kill()
            raise

    def _container_killed(self) -> bool:
        """Whether the kernel killed the worker for the memory of a group above its own: the container's, as on
        Gradescope, whose limit may be below what the worker is allowed. With a group of its own, a kill its own limit
        did not cause (``Group.hit_own_limit``); without one, a kill counted in the container since the worker
        started."""
        if self.process.returncode != -signal.SIGKILL:
            return False
        if self.group is not None:
            return self.group.oom_kills() > 0 and not self.group.hit_own_limit()
        return cgroups.container_kills() > self._container_kills_before

    def _await_reply(self, deadline: float, cpu_limit: float) -> None:
        """Wait until the reply begins, the worker exits or ``deadline`` passes (then ``read_frame`` says which),
        reading the worker's CPU time every CPU_POLL_SECONDS: past ``cpu_limit``, ``OverCpuTime``."""
        ready = [self._replies] if self._exited < 0 else [self._replies, self._exited]
        while (remaining := deadline - time.monotonic()) > 0:
            if select.select(ready, [], [], min(remaining, CPU_POLL_SECONDS))[0]:
                return
            if self.cpu_seconds() > cpu_limit:
                raise OverCpuTime()

    def _cause(self) -> str:
        """Why the worker died, where the grader knows: its control group's memory, or the disk watch."""
        if self.group is not None and self.group.oom_kills() > 0:
            return memorywatch.killed_for_memory(self.limits.memory_mb)
        return self.stopped_for

    def output_tail(self, limit: int = 2000) -> str:
        if self.capture is None:
            return ""
        return self.capture.since(max(0, min(self.capture.mark(), len(self.capture.kept)) - limit), limit)

    def kill(self) -> None:
        """Kill the worker and everything it started."""
        if self.process is None:
            return
        for watch in (self.disk, self.memory):
            if watch is not None:
                watch.close()
        self.disk = self.memory = None
        self._kill_processes()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.worker_pid is not None:
            _reap_adopted(self.worker_pid)
        LIVE.discard(self.process.pid)
        if self.lease is not None:
            self.lease.kill_all()
        # A student's process that outlived its worker (as the worker's uid, or ours), re-parented here.
        reap_children(LIVE | self.elders)
        for fd in (self._requests, self._replies, self._exited):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._requests = self._replies = self._exited = -1

    def _kill_processes(self) -> None:
        """SIGKILL the worker and its process group (the uid's processes: ``lease.kill_all``); without Linux's layers
        what it started first, found while they are still its descendants."""
        started = [] if self.isolation.linux else self._processes()
        for pid in [*started, *({self.worker_pid, self.process.pid} - {None})]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill the worker, give its uid back (swept) and remove its private folder."""
        self.kill()
        if self.group is not None:
            self.group.remove()
            self.group = None
        if self.lease is not None:
            self.lease.release()
            self.lease = None
        if self.private is not None:
            scratch.remove(self.private)
            self.private = None


