"""Starting, talking to and stopping the worker process that runs student code.

How a worker is confined is decided once per grading process (``Isolation.detect``): ``namespaces`` as root where
the kernel allows them, ``permissions`` as root where it does not (Docker's default profile, as on Gradescope), or
``limits`` without root; ``autograder.worker.confine`` says what each mode gives. The grader prepares what a worker
may use: its own private folder (TMPDIR, and the mount point of its root), and as root a uid of its own
(``autograder.permissions``) to which the submission's staged copy is handed with mode 0700. Nothing about the
submission reaches the worker's command line or environment: its spec, the confinement plan included, is its
first message on the requests pipe.

Stopping a worker kills the process the grader started, the worker it forked (PID 1 of its namespace: everything it
started dies with it), every process of its uid (all of its control group's, ``autograder.cgroups``), and, for the
grading process is a child subreaper, any descendant a student's double fork re-parented to it; the worker itself
dies with the grading process (a parent-death signal).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import importlib
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from autograder import cgroups, diskwatch, forking, permissions, protocol, scratch

PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG = 36, 1
LIVE: set[int] = set()  # the pids of the workers (and the worker zygote) this process started and has not stopped
ZYGOTE: forking.Zygote | None = None  # this process's worker zygote (warm_up), where workers are forked
COLD_ENV = "AUTOGRADER_COLD"  # "1": start every runner and worker as a new interpreter (to compare with warm)
NAMESPACES_ENV = "AUTOGRADER_NAMESPACES"  # "0": no namespaces; "1": a probe found them
LANDLOCK_ENV = "AUTOGRADER_LANDLOCK"  # "0": no Landlock layer; N: a probe found Landlock ABI N
SECCOMP_ENV = "AUTOGRADER_SECCOMP"  # "0": no system-call filter; "1": the grader found libseccomp
PROBE = -1  # Isolation.landlock while it is being probed: apply what the kernel offers and say what
START_SECONDS = 120.0  # for the worker to confine itself and import torch (seconds on an idle machine)


@dataclass
class Limits:
    """Resource limits for one worker (see the module docstring). An assignment states every one of them in its
    ``[limits]`` (``from_config`` refuses a partial table), so that its toml says what applies; these defaults serve
    the workers that belong to no assignment (the isolation probe, the harness's own tests)."""

    memory_mb: int = 6144
    cpu_seconds: int = 900
    processes: int = 256
    file_size_mb: int = 64
    open_files: int = 512
    output_bytes: int = 256 * 1024
    threads: int = 1
    tmp_mb: int = 256  # each of /tmp and /dev/shm, where namespaces give the worker its own; what it writes to disk

    @classmethod
    def from_config(cls, config: dict) -> Limits:
        unknown = set(config) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
        missing = [name for name in cls.__dataclass_fields__ if name not in config]
        if missing:
            raise ValueError(f"[limits] must state every limit; add {', '.join(missing)} (the usual values: "
                             + ", ".join(f"{name} = {getattr(cls(), name)}" for name in missing) + ")")
        return cls(**config)


@dataclass
class WorkerDied(Exception):
    """The worker exited or was killed while the parent waited for an answer."""

    returncode: int | None
    output: str = ""
    cause: str = ""  # what the grader knows of why it died (its control group's memory, what it wrote to disk)

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


class SandboxError(Exception):
    """A worker could not be started or confined: the grader's problem, never the submission's."""


@dataclass(frozen=True)
class Isolation:
    """How workers are confined here: ``namespaces``, ``permissions`` or ``limits``, and ``landlock``, the Landlock ABI
    of the allow-list every worker then enforces in any mode (0: none); ``seccomp``, whether every worker filters its
    system calls (``autograder.worker.confine``); ``cgroups``, the controllers of each worker's control group
    (``autograder.cgroups``); ``problem`` says why student code cannot run at all (an interpreter the sandbox uids
    cannot read, in ``permissions`` mode)."""

    mode: str = "limits"
    problem: str = ""
    landlock: int = 0
    seccomp: bool = False
    cgroups: tuple[str, ...] = ()

    @classmethod
    @functools.cache
    def detect(cls) -> Isolation:
        """The confinement (``_confinement``), the system-call filter wherever libseccomp is found, unless
        ``AUTOGRADER_SECCOMP=0`` (no probe: a worker that cannot load it fails to start), and control groups as root
        where a hierarchy is writable, unless ``AUTOGRADER_CGROUPS=0`` (a runner is told which the batch found)."""
        setting = os.environ.get(SECCOMP_ENV)
        confinement = cls._confinement()
        groups = os.environ.get(cgroups.ENV)
        if groups is None:
            groups = ",".join(cgroups.usable()) if confinement.privileged else ""
        return replace(confinement, seccomp=setting == "1" or (setting != "0" and libseccomp_loads()),
                       cgroups=tuple(name for name in groups.split(",") if name in cgroups.CONTROLLERS))

    @classmethod
    def _confinement(cls) -> Isolation:
        """Probe once per process: namespaces as root unless ``AUTOGRADER_NAMESPACES=0`` or the kernel refuses them,
        and Landlock unless ``AUTOGRADER_LANDLOCK=0`` or the kernel (or a container's seccomp profile) refuses it (as
        root the probe's worker shows that it holds; without root a worker that cannot enforce it fails to start). A
        runner is told what its batch found (``AUTOGRADER_NAMESPACES=1``, ``AUTOGRADER_LANDLOCK=ABI``) and does not
        probe again."""
        found = os.environ.get(LANDLOCK_ENV, "")
        landlock = int(found) if found.isdigit() else PROBE
        if os.geteuid() != 0:  # no probe (a student's `check` waits for it): the kernel's word, and workers enforce it
            return cls("limits", landlock=_kernel_landlock() if landlock == PROBE else landlock)
        setting = os.environ.get(NAMESPACES_ENV)
        if setting == "1" and landlock != PROBE:
            return cls("namespaces", landlock=landlock)
        if setting != "0":
            answer = _probe(cls("namespaces", landlock=landlock))
            if answer.get("ready"):
                return cls("namespaces", landlock=answer.get("landlock", 0))
        answer = _probe(cls("permissions", landlock=landlock))
        if not answer.get("ready") or answer.get("unreadable"):
            paths = ", ".join(answer.get("unreadable") or []) or answer.get("error", "the probe failed")
            return cls("permissions", problem=(
                f"grading as root without namespaces runs student code as an unprivileged user, who cannot use the "
                f"interpreter ({paths}): use a Python that every user can read (/usr/bin/python3.11, or one under "
                "/opt, as Gradescope's setup.sh installs) for the virtual environment, or a machine that allows "
                "namespaces"))
        return cls("permissions", landlock=answer.get("landlock", 0))

    def environment(self) -> dict[str, str]:
        """What a process started to grade (a runner) is told, so that it need not probe again."""
        env = {LANDLOCK_ENV: str(self.landlock), SECCOMP_ENV: "1" if self.seccomp else "0",
               cgroups.ENV: ",".join(self.cgroups) or "0"}
        if self.privileged:
            env[NAMESPACES_ENV] = "1" if self.mode == "namespaces" else "0"
        return env

    @property
    def privileged(self) -> bool:
        return self.mode != "limits"

    def note(self) -> str:
        return self._confinement_note() + self._filter_note() + self._groups_note()

    def _filter_note(self) -> str:
        if self.seccomp:
            return "; a system-call filter: no internet sockets, keyrings or message queues"
        return ("; no system-call filter (libseccomp not found, or AUTOGRADER_SECCOMP=0): the kernel's keyrings and "
                "POSIX message queues are the machine's, and so is its network without namespaces")

    def _groups_note(self) -> str:
        counted = {"memory": "memory", "pids": "number", "cpu": "CPU share"}
        if self.cgroups:
            named = [counted[name] for name in self.cgroups]
            listed = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
            return f"; a control group: its processes' {listed} counted together"
        if self.privileged:
            return ("; no control groups (no writable cgroup hierarchy, or AUTOGRADER_CGROUPS=0): memory and CPU "
                    "time are limited per process")
        return ""

    def _confinement_note(self) -> str:
        landlock = f"Landlock ABI {self.landlock}"
        if self.mode == "namespaces":
            return ("isolated: own uid, a private file system holding only the interpreter and the submission, "
                    "private /tmp, no network" + (f"; the same allow-list enforced again by {landlock}"
                                                   if self.landlock else ""))
        if self.mode == "permissions" and self.landlock:
            return (f"own uid, resource limits and an allow-list of files ({landlock}: the interpreter, the submission "
                    "and a private /tmp; no TCP, no signals out), but no namespaces on this machine: /dev/shm is "
                    "shared" + ("" if self.seccomp else " and UDP reachable"))
        if self.mode == "permissions":
            return ("own uid and resource limits, but no namespaces on this machine: what student code must not "
                    "read is protected by file permissions only, and files other users can read are readable")
        if self.landlock:
            return (f"not running as root: student code runs as your user, with resource limits and an allow-list of "
                    f"files ({landlock}: the interpreter, the submission and a private /tmp; no TCP, no signals "
                    "out); grade untrusted submissions as root (or on Gradescope) for full isolation")
        return ("not running as root: student code runs as your user with resource limits only; "
                "grade untrusted submissions as root (or on Gradescope) for full isolation")


class OutputCapture:
    """Drains a pipe in a thread, keeping the first ``cap`` bytes and a running total.

    Every read from the pipe happens under the lock, and ``settled_mark`` and ``since`` read what the pipe holds
    themselves: a mark then counts every byte written before it, however far behind the thread is. (A thread that
    had read a chunk but not yet counted it let loading's print reach a test's output under load.)"""

    PIPE_MOST = 1 << 20  # Linux's largest pipe buffer: what a worker waiting on its reply can have left unread

    def __init__(self, stream, cap: int):
        self.cap = cap
        self.kept = bytearray()
        self.total = 0
        self._stream = stream  # read through its fd only; closed here at end of file, once
        os.set_blocking(stream.fileno(), False)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        poller = select.poll()
        poller.register(self._stream.fileno(), select.POLLIN)
        while True:
            poller.poll()
            with self._lock:
                if not self._read(65536):
                    return

    def _read(self, most: int) -> bool:
        """With the lock held: read up to ``most`` bytes the pipe holds now; False once it is closed."""
        if self._stream.closed:
            return False
        while most > 0:
            try:
                chunk = os.read(self._stream.fileno(), min(most, 65536))
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self._stream.close()
                return False
            room = self.cap - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.total += len(chunk)
            most -= len(chunk)
        return True

    def mark(self) -> int:
        with self._lock:
            return self.total

    def settled_mark(self) -> int:
        """``mark`` counting all that is in the pipe now: after a reply, everything the worker printed before it."""
        with self._lock:
            self._read(self.PIPE_MOST)
            return self.total

    def since(self, mark: int, limit: int = 2000) -> str:
        """Text printed since ``mark`` (and in the pipe now), at most ``limit`` characters, with a note when cut."""
        with self._lock:
            self._read(self.PIPE_MOST)
            text = bytes(self.kept[mark:]).decode("utf-8", "replace")
            total = self.total - mark
        if len(text) > limit or total > len(text):
            shown = text[:limit]
            return shown + f"\n[... output truncated: {total} bytes in all]"
        return text


def become_subreaper() -> None:
    """Make orphaned descendants re-parent to this process (Linux), so they can be reaped."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def warm_up(plots: bool = True) -> forking.Zygote | None:
    """Fork this process's worker zygote (``autograder.forking``), once: call it first thing, before reading a job or
    loading anything hidden, since every worker is a copy of the zygote's memory. None where workers start cold:
    ``AUTOGRADER_COLD=1`` (to compare), or a process that already runs a second thread (``forking.fork_ready``).
    ``plots``: whether its workers get pyplot ready made (``autograder.worker.zygote``)."""
    global ZYGOTE
    if ZYGOTE is not None or os.environ.get(COLD_ENV) == "1":
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
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
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
    atexit.register(close_zygote)
    return ZYGOTE


def _namespaces_first() -> bool:
    """Whether ``Isolation.detect`` tries namespaces first (as root, unless told not to): how the worker zygote's
    first spare is forked, before this process knows its isolation."""
    return os.geteuid() == 0 and os.environ.get(NAMESPACES_ENV) != "0"


def close_zygote() -> None:
    """At exit: stop the worker zygote and collect its exit, rather than leave it to whichever subreaper adopts it."""
    global ZYGOTE
    if ZYGOTE is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(ZYGOTE.pid, signal.SIGKILL)
        ZYGOTE.close()
        LIVE.discard(ZYGOTE.pid)
        ZYGOTE = None


class Sandbox:
    """One worker process for the staged submission in ``root``."""

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
        self.stopped_for = ""  # why the disk watch stopped the worker
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
            self.process = self._fork(req_r, rep_w) if ZYGOTE is not None and not self.spec["probe"] else None
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
        with contextlib.suppress(OSError):  # a worker that dies is seen at once, whatever it left holding its pipe
            self._exited = os.pidfd_open(self.pid)
        self.disk = diskwatch.Watch([self.root, self.private / "tmp"], self.limits.tmp_mb, self._stop_writing,
                                    self._processes)

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

    def _stop_writing(self, reason: str) -> None:
        """The disk watch's ``stop``, in its thread: kill the worker and what it started (``kill`` collects them)."""
        self.stopped_for = reason
        self._kill_processes()
        if self.lease is not None:
            self.lease.kill_all()

    def _fork(self, requests: int, replies: int) -> forking.Forked:
        """A worker forked by this process's zygote, on the same pipes a started one gets."""
        out_r, out_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        try:
            forked = ZYGOTE.spawn(self._environment(), [devnull, out_w, requests, replies], None,
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
                "init": self._forked_into_namespace(),
                "workdir": str(self.root), "tmpdir": str(self.private / "tmp"),
                "rootfs": str(self.private / "rootfs"), "tmp_mb": self.limits.tmp_mb, "limits": limits}

    def _forked_into_namespace(self) -> bool:
        """Whether the worker is already PID 1 of a PID namespace of its own (forked there by the zygote)."""
        return isinstance(self.process, forking.Forked) and self.isolation.mode == "namespaces"

    def _handshake(self) -> None:
        protocol.write_frame(self._requests, {**self.spec, "confine": self.plan()}, [])
        deadline = time.monotonic() + START_SECONDS
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
        for name in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "OMP_WAIT_POLICY",
                     "ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS"):
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

    def request(self, header: dict, blobs: list[bytes], deadline: float) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply until ``deadline`` (monotonic seconds).

        Raises ``protocol.ReadTimeout`` (the worker is killed first) or ``WorkerDied``.
        """
        try:
            protocol.write_frame(self._requests, header, blobs)
            reply, reply_blobs = protocol.read_frame(self._replies, deadline, max_bytes=self.limits.memory_mb << 20,
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
            raise WorkerDied(self.process.returncode, self.output_tail(), self._cause()) from None
        except protocol.ProtocolError:
            self.kill()
            raise

    def _cause(self) -> str:
        """Why the worker died, where the grader knows: its control group's memory, or the disk watch."""
        if self.group is not None and self.group.oom_kills() > 0:
            return (f"the process running your code, or one it started, was killed for memory: all of its processes "
                    f"together may use at most {self.limits.memory_mb} MB")
        return self.stopped_for

    def output_tail(self, limit: int = 2000) -> str:
        if self.capture is None:
            return ""
        return self.capture.since(max(0, min(self.capture.mark(), len(self.capture.kept)) - limit), limit)

    def kill(self) -> None:
        """Kill the worker and everything it started."""
        if self.process is None:
            return
        if self.disk is not None:
            self.disk.close()
            self.disk = None
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
        """SIGKILL the worker and its process group (the uid's processes: ``lease.kill_all``)."""
        for pid in {self.worker_pid, self.process.pid} - {None}:
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


def _probe(isolation: Isolation) -> dict:
    """Start a worker that only confines itself (in a scratch folder) and report its handshake."""
    with scratch.folder("probe") as folder:
        root = folder / "submission"
        root.mkdir()
        sandbox = Sandbox(root, {}, Limits(), isolation, probe=True)
        try:
            sandbox.start()
            return sandbox.answer
        except SandboxError as exc:
            return {"ready": False, "error": str(exc)}
        finally:
            sandbox.close()


def libseccomp_loads() -> bool:
    """Whether the system's libseccomp loads here (for the workers' system-call filter); loaded, it stays loaded."""
    try:
        import pyseccomp  # noqa: F401
    except (ImportError, OSError, RuntimeError):  # pyseccomp raises RuntimeError where libseccomp is not installed
        return False
    return True


def _kernel_landlock() -> int:
    """The running kernel's Landlock ABI, 0 where it has none (or a seccomp profile refuses the call)."""
    import landlockpy

    try:
        return landlockpy.abi_version()
    except OSError:
        return 0


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
