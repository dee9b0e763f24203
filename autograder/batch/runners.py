"""The runner processes of a batch (``Runners``): started in a scratch folder of the batch's, removed at the end
whatever happened; SIGINT or SIGTERM stops every runner (they stop their workers). Runners are forked by a warm zygote
per kind of grading (``autograder.batch.zygote``; ``ZYGOTES`` here, stopped by ``close_zygotes``).

Every grading's OpenMP threads wait as ``OPENMP`` says (runner and workers): a short spin, then sleep. By default they
spin for a long while before sleeping, and two gradings' spinning threads on the same cores slow each other down many
times over; since the lm retraining's budgets became CPU time (issue 42), a spinning thread's CPU time is not work
either, and grows with whatever else loads the machine. Waiting passively at once (``GOMP_SPINCOUNT`` 0) costs the
other way: a small model's step is hundreds of short parallel regions, and a thread put to sleep and woken at each
costs system time and latency, and the retraining's wall time grows by a third on an idle machine. A spin of
``GOMP_SPINCOUNT`` iterations bridges the gap between two regions without spinning through another process's time
slice (docs/performance.md has the figures, idle and oversubscribed)."""

from __future__ import annotations

import atexit
import contextlib
import importlib.machinery
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from autograder import forking, scratch
from autograder.course import PACKAGE_DIR, REPO_ROOT, SECRET_ENV
from autograder.sandbox import permissions
from autograder.sandbox.config import COLD_ENV
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.reaping import become_subreaper, reap_children

# How OpenMP's threads wait (libgomp, which torch's Linux wheels use): passively, after a spin of GOMP_SPINCOUNT
# iterations (the module docstring says why; bench/openmp_wait.py measures it)
OPENMP = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "1000"}
STOP_GRACE_SECONDS = 5.0  # after SIGTERM, a runner has this long to stop its workers before it is killed


class Runners:
    """The runner processes in flight, started in a scratch folder of the batch's (their TMPDIR), so that a stop
    signal reaches every one and nothing they leave outlives the batch.

    Runners are forked by a warm zygote (``autograder.batch.zygote``), one per kind of grading, started once and kept
    for the life of this process (``validate`` grades many batches); ``AUTOGRADER_COLD=1`` starts each runner as a
    new interpreter instead. ``huge_pages``: the zygote, if started here, moves its memory into 2 MiB pages before it
    serves (``forking.collapse_memory``): for a batch of many, whose forks that makes cheaper; a lone submission's
    would wait for the move (a zygote started for one is then reused as it is)."""

    def __init__(self, isolation: Isolation, side_by_side: bool = False, huge_pages: bool = False):
        self.isolation = isolation
        self.side_by_side = side_by_side
        self.huge_pages = huge_pages
        self.stopping = False
        self.live: set = set()
        self.abnormal = False  # a runner died or was killed: its leftovers need a sweep
        self._lock = threading.Lock()
        self.scratch: Path | None = None
        # the runners' known mistakes' values (``autograder.grading.oracle``), as root only
        self.shared: Path | None = None

    def environment(self) -> dict:
        """The runners' environment: the term's secret is not in it (it travels in the job, on stdin)."""
        env = {name: value for name, value in os.environ.items() if name != SECRET_ENV}
        env["TMPDIR"] = str(self.scratch)
        env.update(harness_path(env))
        env.update(self.isolation.environment())  # the runners need not probe again
        env.update(OPENMP)
        return env

    def zygote(self) -> forking.Zygote | None:
        """This kind of grading's runner zygote, started on first use (from the main thread: its parent-death signal
        follows the thread that starts it); None to start runners cold."""
        if os.environ.get(COLD_ENV) == "1":
            return None
        key = (self.side_by_side, self.isolation.mode, self.isolation.landlock)
        zygote = ZYGOTES.get(key)
        if zygote is None or zygote.process.poll() is not None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            process = subprocess.Popen(
                [sys.executable, "-m", "autograder.batch.zygote", "--channel", str(theirs.fileno()),
                 *(["--huge-pages"] if self.huge_pages else [])],
                pass_fds=(theirs.fileno(),), env=self.environment(), cwd="/", stdin=subprocess.DEVNULL,
                start_new_session=True)
            theirs.close()
            if not ZYGOTES:
                atexit.register(close_zygotes)
            zygote = ZYGOTES[key] = forking.Zygote(process.pid, ours, process)
        return zygote

    def start(self, job: dict, log) -> subprocess.Popen | forking.Forked:
        """Start a runner for ``job`` (sent on its stdin), its output into the file ``log``."""
        shared = {"shared": str(self.shared)} if self.shared else {}
        payload = json.dumps({**job, "tmp": str(self.scratch), **shared, "started": time.time()}).encode()
        zygote = self.zygote()
        with self._lock:
            process = None
            if zygote is not None:
                read, write = os.pipe()
                try:
                    process = zygote.spawn(self.environment(), [read, log.fileno()], None)
                    os.write(write, payload)
                except (forking.ForkRefused, OSError):  # OSError: the zygote died since it was asked (a broken pipe)
                    process = None
                finally:
                    os.close(read)
                    os.close(write)
            if process is None:
                process = subprocess.Popen([sys.executable, "-m", "autograder.grading.runner"], stdin=subprocess.PIPE,
                                           stdout=log, stderr=subprocess.STDOUT, env=self.environment(),
                                           start_new_session=True)
                process.stdin.write(payload)
                process.stdin.close()
            self.live.add(process)
        return process

    def finish(self, process) -> None:
        with self._lock:
            self.live.discard(process)
            self.abnormal = self.abnormal or process.returncode != 0
            live = {runner.pid for runner in self.live}
        forking.reap_ended(set(ZYGOTES.values()), keep=live)  # what earlier runners left

    def stop(self) -> None:
        """SIGTERM every runner (each stops its workers and writes what it has), then SIGKILL the stragglers."""
        self.stopping = True
        with self._lock:
            live = list(self.live)
        for process in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    @contextlib.contextmanager
    def stop_on_signals(self, signals: bool = True):
        """Within the block: a scratch folder for the runners, and SIGINT/SIGTERM stop them (main thread only, and
        not with ``signals=False``: a Ray worker's signals are Ray's); afterwards the scratch folder is removed and, if
        a runner ended abnormally, whatever it left is swept."""
        become_subreaper()  # forked runners are re-parented here
        before = forking.child_pids()  # the host's, never reaped here
        handlers = {}  # taken before the scratch folder is made: a signal in between would leave it behind
        if signals and threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                handlers[number] = signal.signal(number, lambda *_: threading.Thread(target=self.stop).start())
        try:
            self.scratch = scratch.make("batch")
            if self.isolation.privileged:
                os.chmod(self.scratch, 0o711)  # the workers' uids pass through to their own folders
                self.shared = self.scratch / "mistakes"  # no student process can write there (not as its own user)
                self.shared.mkdir(mode=0o700)
            if handlers:
                self.zygote()
            yield self
        finally:
            for number, handler in handlers.items():
                signal.signal(number, handler)
            if (self.abnormal or self.stopping) and self.isolation.privileged:
                permissions.sweep_free()  # the uids of workers whose runner did not give them back
            reap_children(before | {zygote.pid for zygote in ZYGOTES.values()}, STOP_GRACE_SECONDS)
            if self.scratch is not None:
                scratch.remove(self.scratch)


def harness_path(env: dict[str, str]) -> dict[str, str]:
    """``PYTHONPATH`` for a runner, with this harness first where the interpreter would find another by itself: a
    runner must import the package this process runs. An environment linked from another checkout installs that
    checkout's (editable), which ``python -m autograder.cli`` run here does not import, but a runner (its zygote starts
    in /) did: it knew none of this checkout's assignments ("unknown assignment"), and a new one graded 0/0."""
    found = None
    for finder in sys.meta_path:  # as the runner imports it: this process's path but its first entry (the folder here)
        path = sys.path[1:] if finder is importlib.machinery.PathFinder else None
        found = getattr(finder, "find_spec", lambda *_: None)("autograder", path)
        if found is not None:
            break
    if found is not None and found.origin and Path(found.origin).resolve().parent == PACKAGE_DIR:
        return {}
    return {"PYTHONPATH": os.pathsep.join([str(REPO_ROOT), *filter(None, [env.get("PYTHONPATH")])])}


ZYGOTES: dict[tuple, forking.Zygote] = {}  # the runner zygotes, by (side by side, isolation mode, Landlock ABI)


def close_zygotes() -> None:
    """Stop the runner zygotes and reap what they leave (at exit, so that none outlives the batch's process)."""
    for zygote in ZYGOTES.values():
        with contextlib.suppress(OSError):
            zygote.process.kill()
        zygote.process.wait()
        zygote.close()
    ZYGOTES.clear()
    reap_children(set(), STOP_GRACE_SECONDS)


