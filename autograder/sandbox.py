"""Starting, talking to and killing the worker process that runs student code.

Every worker gets: a private copy of the submission as its working directory, a clean
environment, rlimits (address space, CPU seconds, processes, file size, open files), its own
session (so a timeout kills the whole process group) and a capped capture of its output.

When the grader runs as root (Gradescope, CI) the worker also gets, before any student code runs:
a uid of its own from a pool (61000+, locked per worker, so concurrent submissions cannot touch
each other and every leftover process can be killed by uid), a private mount namespace in which
the secret paths (solutions, hidden suites, mutants, other submissions) are covered by empty
read-only tmpfs mounts, and an empty network namespace. Where the interpreter lives under a
directory the uid cannot traverse (pyenv in /root), that directory is covered by a tmpfs in the
worker's namespace and only the interpreter and the virtual environment are bound back into it.
Without root, isolation is limited to rlimits and sessions: ``Isolation.note`` says so and the
grade command warns. As root in a container that refuses namespaces (Docker's default profile, which
Gradescope may use), the worker still gets its own uid and limits, but what it must not read is then
protected by file permissions only (the Gradescope driver makes its secrets root-only for this);
``AUTOGRADER_NAMESPACES=0`` forces that mode.

The grading process sets itself as a child subreaper so that a student's double-forked,
``setsid``-detached process is re-parented to it and killed when the worker is closed.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autograder import protocol

UID_POOL = range(61000, 61512)
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = (
    1, 2, 4, 32, 4096, 8192, 16384, 1 << 18)
PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Limits:
    """Resource limits for one worker (see the module docstring)."""

    memory_mb: int = 6144
    cpu_seconds: int = 900
    processes: int = 256
    file_size_mb: int = 64
    open_files: int = 512
    output_bytes: int = 256 * 1024
    threads: int = 1

    @classmethod
    def from_config(cls, config: dict) -> Limits:
        unknown = set(config) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
        return cls(**config)


@dataclass
class WorkerDied(Exception):
    """The worker exited or was killed while the parent waited for an answer."""

    returncode: int | None
    output: str = ""

    def describe(self) -> str:
        code = self.returncode
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


@dataclass
class Isolation:
    """What the worker must not see, and whether root-only protections are available."""

    hidden_paths: list[str] = field(default_factory=list)

    @property
    def privileged(self) -> bool:
        return os.geteuid() == 0

    def note(self) -> str:
        if self.privileged and not namespaces_available():
            return ("own uid and resource limits, but no mount or network namespaces on this machine: solutions "
                    "and hidden tests are protected by file permissions only")
        if self.privileged:
            return "isolated: own uid, private mounts hiding solutions and hidden tests, no network"
        return ("not running as root: student code runs as your user with resource limits only; "
                "grade untrusted submissions as root (or on Gradescope) for full isolation")


class OutputCapture:
    """Drains a pipe in a thread, keeping the first ``cap`` bytes and a running total."""

    def __init__(self, stream, cap: int):
        self.cap = cap
        self.kept = bytearray()
        self.total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self._thread.start()

    def _drain(self, stream) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := stream.read1(65536):
                with self._lock:
                    room = self.cap - len(self.kept)
                    if room > 0:
                        self.kept += chunk[:room]
                    self.total += len(chunk)

    def mark(self) -> int:
        with self._lock:
            return self.total

    def since(self, mark: int, limit: int = 2000) -> str:
        """Text printed since ``mark``, at most ``limit`` characters, with a note when cut."""
        self._thread.join(timeout=0.05)
        with self._lock:
            text = bytes(self.kept[mark:]).decode("utf-8", "replace")
            total = self.total - mark
        if len(text) > limit or total > len(text):
            shown = text[:limit]
            return shown + f"\n[... output truncated: {total} bytes in all]"
        return text


class UidLease:
    """An exclusive uid from the pool, held through a lock file while the worker lives."""

    def __init__(self):
        lock_dir = Path(tempfile.gettempdir()) / "autograder-uids"
        lock_dir.mkdir(mode=0o700, exist_ok=True)
        for uid in UID_POOL:
            handle = open(lock_dir / f"{uid}.lock", "w")  # noqa: SIM115 - held for the lease's life
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            self.uid, self._handle = uid, handle
            return
        raise RuntimeError(f"all {len(UID_POOL)} sandbox uids are in use; lower --jobs")

    def kill_all(self) -> None:
        """SIGKILL every process owned by the uid (``kill -1`` as that uid reaches exactly those)."""
        for _ in range(3):
            subprocess.run(["kill", "-9", "-1"], user=self.uid, group=self.uid, extra_groups=[],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)

    def release(self) -> None:
        self.kill_all()
        self._handle.close()


@functools.cache
def namespaces_available() -> bool:
    """Whether this (root) process may give workers private mount and network namespaces.

    Probed once in a child process; ``AUTOGRADER_NAMESPACES=0`` answers no without probing.
    """
    if os.geteuid() != 0 or os.environ.get("AUTOGRADER_NAMESPACES") == "0":
        return False
    probe = ("import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); "
             f"sys.exit(libc.unshare({CLONE_NEWNS | CLONE_NEWNET}) != 0 "
             f"or libc.mount(b'none', b'/', None, {MS_REC | MS_PRIVATE}, None) != 0)")
    return subprocess.run([sys.executable, "-I", "-c", probe], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False).returncode == 0


def become_subreaper() -> None:
    """Make orphaned descendants re-parent to this process (Linux), so they can be reaped."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


class Sandbox:
    """One worker process for one submission directory."""

    def __init__(self, root: Path, spec: dict, limits: Limits, isolation: Isolation):
        self.root = Path(root)
        self.spec = dict(spec, root=str(self.root), threads=limits.threads)
        self.limits = limits
        self.isolation = isolation
        self.process: subprocess.Popen | None = None
        self.capture: OutputCapture | None = None
        self.lease: UidLease | None = None
        self._namespaces = False

    # ------------------------------------------------------------ life cycle

    def start(self) -> None:
        self._namespaces = self.isolation.privileged and namespaces_available()
        if self.isolation.privileged:
            self.lease = UidLease()
            _chown_tree(self.root, self.lease.uid)
        if self._namespaces:
            self._staging = tempfile.mkdtemp(prefix="autograder-mnt-")
            self._exposure = _exposure_plan(_interpreter_paths())
            for i, (_, paths) in enumerate(self._exposure):
                for j in range(len(paths)):
                    os.mkdir(os.path.join(self._staging, f"{i}-{j}"))
        # Without a uid of its own, the worker shares the user's process count: allow what exists plus the limit.
        self._nproc = self.limits.processes + (0 if self.lease else _user_task_count())
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        argv = [sys.executable, "-I", "-B", "-m", "autograder.worker", "--requests", str(req_r),
                "--replies", str(rep_w), "--spec", json.dumps(self.spec)]
        self.process = subprocess.Popen(
            argv, cwd=self.root, env=self._environment(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(req_r, rep_w),
            start_new_session=True, preexec_fn=self._preexec, close_fds=True,
        )
        os.close(req_r)
        os.close(rep_w)
        self._requests, self._replies = req_w, rep_r
        self.capture = OutputCapture(self.process.stdout, self.limits.output_bytes)

    def _environment(self) -> dict:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.root),
            "TMPDIR": str(self.root),
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

    def _preexec(self) -> None:
        """Runs in the child between fork and exec: namespaces, privilege drop, rlimits."""
        if self._namespaces:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNS | CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "cannot create the sandbox namespaces")
            _mount(libc, "none", "/", None, MS_REC | MS_PRIVATE)
            for i, (blocked, paths) in enumerate(self._exposure):
                stages = [os.path.join(self._staging, f"{i}-{j}") for j in range(len(paths))]
                for path, stage in zip(paths, stages, strict=True):
                    _mount(libc, path, stage, None, MS_BIND | MS_REC)
                _mount(libc, "tmpfs", blocked, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=64k")
                for path, stage in zip(paths, stages, strict=True):
                    os.makedirs(path, exist_ok=True)
                    _mount(libc, stage, path, None, MS_MOVE)
                _mount(libc, "none", blocked, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
            for path in self.isolation.hidden_paths:
                if os.path.exists(path):
                    _mount(libc, "tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=000")
        if self.lease is not None:
            os.setgroups([])
            os.setresgid(self.lease.uid, self.lease.uid, self.lease.uid)
            os.setresuid(self.lease.uid, self.lease.uid, self.lease.uid)
        os.umask(0o077)
        mb = 1 << 20
        limits = {
            resource.RLIMIT_AS: self.limits.memory_mb * mb,
            resource.RLIMIT_CPU: self.limits.cpu_seconds,
            resource.RLIMIT_FSIZE: self.limits.file_size_mb * mb,
            resource.RLIMIT_NOFILE: self.limits.open_files,
            resource.RLIMIT_CORE: 0,
            resource.RLIMIT_NPROC: self._nproc,
        }
        for which, value in limits.items():
            resource.setrlimit(which, (value, value))

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def request(self, header: dict, blobs: list[bytes], deadline: float) -> tuple[dict, list[bytes]]:
        """Send one request and wait for its reply until ``deadline`` (monotonic seconds).

        Raises ``protocol.ReadTimeout`` (the worker is killed first) or ``WorkerDied``.
        """
        try:
            protocol.write_frame(self._requests, header, blobs)
            return protocol.read_frame(self._replies, deadline, max_bytes=self.limits.memory_mb << 20)
        except protocol.ReadTimeout:
            self.kill()
            raise
        except (protocol.PeerClosed, BrokenPipeError):
            self.kill()
            raise WorkerDied(self.process.returncode, self.output_tail()) from None
        except protocol.ProtocolError:
            self.kill()
            raise

    def output_tail(self, limit: int = 2000) -> str:
        if self.capture is None:
            return ""
        return self.capture.since(max(0, min(self.capture.mark(), len(self.capture.kept)) - limit), limit)

    def kill(self) -> None:
        """Kill the worker, its process group, and everything it left behind."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.lease is not None:
            self.lease.kill_all()
        _kill_descendants()
        for fd in (self._requests, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._requests = self._replies = -1

    def close(self) -> None:
        self.kill()
        if self.lease is not None:
            self.lease.release()
            self.lease = None
        if self._namespaces:
            shutil.rmtree(self._staging, ignore_errors=True)


def _mount(libc, source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda text: None if text is None else os.fsencode(text)  # noqa: E731
    if libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        raise OSError(ctypes.get_errno(), f"sandbox mount of {target} failed")


def _interpreter_paths() -> list[str]:
    """Directories the worker's interpreter must reach: the Python install, the venv, this package."""
    import autograder

    return [sys.base_prefix, sys.prefix, str(Path(autograder.__file__).resolve().parent.parent)]


def safe_hidden_paths(paths: list[str], keep: list[str] = ()) -> list[str]:
    """``paths`` minus any that would hide the interpreter, the venv, this package or ``keep``."""
    needed = [os.path.realpath(p) for p in [*_interpreter_paths(), *keep]]
    kept = []
    for path in {os.path.realpath(p) for p in paths}:
        if not any(n == path or n.startswith(path.rstrip(os.sep) + os.sep) for n in needed):
            kept.append(path)
    return sorted(kept)


def _exposure_plan(paths: list[str]) -> list[tuple[str, list[str]]]:
    """Group needed paths by their first ancestor that others cannot traverse (mode without o+x)."""
    needed = sorted({os.path.realpath(p) for p in paths})
    needed = [p for p in needed if not any(p != q and p.startswith(q + os.sep) for q in needed)]
    plan: dict[str, list[str]] = {}
    for path in needed:
        parts = Path(path).parts
        for depth in range(2, len(parts) + 1):
            ancestor = str(Path(*parts[:depth - 1]))
            if not os.stat(ancestor).st_mode & 0o001:
                plan.setdefault(ancestor, []).append(path)
                break
    return list(plan.items())


def _chown_tree(root: Path, uid: int) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [dirpath, *(os.path.join(dirpath, n) for n in dirnames + filenames)]:
            os.lchown(name, uid, uid)


def _user_task_count() -> int:
    """Processes and threads the current user owns (RLIMIT_NPROC counts both)."""
    import psutil

    uid, count = os.getuid(), 0
    for process in psutil.process_iter(["uids", "num_threads"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if process.info["uids"].real == uid:
                count += process.info["num_threads"]
    return count


def _kill_descendants() -> None:
    """Kill every process that descends from this one (orphans re-parented to us included)."""
    import psutil

    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass

