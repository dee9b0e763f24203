"""The allow-list a worker confines itself to with Landlock (``autograder/worker/confine.py``), in every mode this
machine offers: outside it nothing can be read, listed or written even where mode bits allow it (a world-readable copy
of the solutions elsewhere on disk, the checkout itself; as root in ``limits`` mode, everything), and there is no TCP,
no abstract UNIX socket, no named socket in /dev/shm and no signal to the grader; inside it, what student code needs
still works: its own files, its TMPDIR (a named socket too), /dev/shm (semaphores), /proc/self, devices, subprocesses
and DataLoader workers. ``limits`` without Landlock is the control: there every probe succeeds, so each check can
fail."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import landlockpy
import pytest
from support.machine import is_root
from support.submissions import REPO

from autograder.grading.proxy import Student
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation
from autograder.worker import confine

ABI = Isolation.detect().landlock
needs_landlock = pytest.mark.skipif(ABI < 6, reason="this kernel has no Landlock with scopes (ABI 6) to probe")

PROBE = r'''
import os, socket, subprocess, sys


def attempt(action, *args):
    """"ok: what came back" or "refused: the exception's class"."""
    try:
        return "ok:" + str(globals()["_" + action](*args))[:60]
    except Exception as exc:
        return "refused:" + type(exc).__name__


def _read(path):
    with open(path, "rb") as handle:
        return handle.read(16)


def _list(path):
    return len(os.listdir(path))


def _write(path):
    with open(path, "w") as handle:
        handle.write("written")
    return path


def _tcp(port):
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    return port


def _abstract(name):
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect("\0" + name)
    return name


def _named_socket(folder):
    path = os.path.join(os.environ["TMPDIR"] if folder == "TMPDIR" else folder, f"socket-{os.getpid()}")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(path)
    os.unlink(path)
    return path


def _signal(pid):
    os.kill(pid, 0)
    return pid


def _tmp():
    return _read(_write(os.path.join(os.environ["TMPDIR"], "scratch")))


def _semaphore():
    import multiprocessing
    lock = multiprocessing.Lock()
    with lock:
        return "held"


def _dataloader():
    from torch.utils.data import DataLoader
    return sum(int(batch.sum()) for batch in DataLoader(list(range(8)), batch_size=4, num_workers=2))


def _subprocess():
    return subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, check=True).stdout
'''


def _modes() -> list[tuple[str, int]]:
    """(mode, Landlock ABI) pairs this machine can run, and the control last."""
    modes = [("limits", ABI)]
    if is_root:
        modes[:0] = [("namespaces", ABI)] if Isolation.detect().mode == "namespaces" else []
        modes.insert(-1, ("permissions", ABI))
    return [*modes, ("limits", 0)]


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """What lies outside the allow-list: a world-readable and -writable folder holding a copy of a solution, a TCP
    port and an abstract UNIX socket that accept connections."""
    folder = Path("/tmp") / f"allow-list-outside-{secrets.token_hex(4)}"
    folder.mkdir()
    shutil.copy(REPO / "solutions" / "masking" / "masking.py", folder / "masking.py")
    os.chmod(folder, 0o777)
    os.chmod(folder / "masking.py", 0o644)
    tcp = socket.create_server(("127.0.0.1", 0))
    abstract = socket.socket(socket.AF_UNIX)
    name = f"autograder-test-{secrets.token_hex(4)}"
    abstract.bind("\0" + name)
    abstract.listen()
    yield {"copy": str(folder / "masking.py"), "folder": str(folder), "port": tcp.getsockname()[1], "name": name}
    tcp.close()
    abstract.close()
    shutil.rmtree(folder)


@needs_landlock
@pytest.mark.parametrize(("mode", "landlock"), _modes(), ids=[f"{m}-landlock{a}" for m, a in _modes()])
def test_outside_the_allow_list_nothing_is_reachable_inside_it_everything_needed_is(outside, mode, landlock):
    planted = Path(outside["folder"], f"planted-{mode}-{landlock}")
    staged = Path(tempfile.mkdtemp(prefix="allow-list-"))  # as a batch stages: a sandbox uid passes through
    os.chmod(staged, 0o711)
    submission = staged / "submission"
    submission.mkdir()
    (submission / "probe.py").write_text(PROBE)
    filtered = bool(landlock) and Isolation.detect().seccomp  # what student code needs must work behind the filter too
    student = Student(submission, [{"name": "probe"}], Limits(threads=2),
                      Isolation(mode, landlock=landlock, seccomp=filtered))
    try:
        attempt = student.probe.attempt
        reached = {
            "a world-readable copy of a solution": attempt("read", outside["copy"]),
            "the checkout's solutions": attempt("read", str(REPO / "solutions" / "masking" / "masking.py")),
            "the root folder's listing": attempt("list", "/"),
            "a world-writable folder": attempt("write", str(planted)),
            "a TCP port of the machine": attempt("tcp", outside["port"]),
            "an abstract UNIX socket": attempt("abstract", outside["name"]),
            "a named socket in /dev/shm, which workers share without namespaces": attempt("named_socket", "/dev/shm"),
            "the grader's process": attempt("signal", os.getpid()),
        }
        needed = {
            "its own file": attempt("read", "probe.py"),
            "its TMPDIR": attempt("tmp"),
            "a named socket in its TMPDIR (multiprocessing's managers)": attempt("named_socket", "TMPDIR"),
            "a semaphore in /dev/shm": attempt("semaphore"),
            "/proc/self": attempt("read", "/proc/self/status"),
            "/dev/urandom": attempt("read", "/dev/urandom"),
            "a subprocess": attempt("subprocess"),
            "DataLoader workers": attempt("dataloader"),
        }
    finally:
        student.close()
        shutil.rmtree(staged)
    assert not [what for what, outcome in needed.items() if not outcome.startswith("ok:")], needed
    if landlock:
        assert not [what for what, outcome in reached.items() if not outcome.startswith("refused:")], reached
    else:
        assert not [what for what, outcome in reached.items() if not outcome.startswith("ok:")], reached
    assert planted.exists() == (not landlock)


class Refused(landlockpy.Ruleset):
    """Landlock as a container's seccomp profile leaves it: every call refused."""

    def __init__(self, *args, **kwargs):
        raise landlockpy.LandlockError(errno.EPERM, "Operation not permitted")


class Unenforceable(landlockpy.Ruleset):
    """A ruleset that can be built but not enforced."""

    def restrict(self, *args, **kwargs):
        raise landlockpy.LandlockError(errno.EPERM, "Operation not permitted")


def test_without_landlock_the_probe_hears_none_and_a_worker_that_needs_it_refuses_to_start(monkeypatch, tmp_path):
    """Where the kernel or a seccomp profile refuses Landlock, the probe (``wanted`` -1) learns that there is none
    and grading goes on with the other layers; a worker told that the probe found it fails closed (the grader's
    problem), whether building or enforcing the ruleset fails."""
    view = {"cwd": str(tmp_path), "tmp": str(tmp_path)}
    monkeypatch.setattr(confine.landlockpy, "Ruleset", Refused)
    assert confine._allow_list(view, 0) is None and confine._allow_list(view, -1) is None
    with pytest.raises(confine.ConfineError, match="the probe found Landlock ABI 7 but this worker cannot use it"):
        confine._allow_list(view, 7)
    if not landlockpy.supported():
        return
    monkeypatch.setattr(confine.landlockpy, "Ruleset", Unenforceable)
    # as a worker confines itself: single-threaded (pytest's process may run more)
    monkeypatch.setattr(confine.forking, "thread_count", lambda: 1)
    assert confine._enforce(confine._allow_list(view, -1), -1) == 0
    with pytest.raises(confine.ConfineError, match="could not enforce the Landlock allow-list"):
        confine._enforce(confine._allow_list(view, landlockpy.abi_version()), landlockpy.abi_version())


@needs_landlock
def test_a_worker_with_a_second_thread_refuses_to_enforce_an_allow_list_that_would_not_hold_it():
    """Landlock confines the thread that asks and what it starts: a thread already running would stay free. Run in a
    process of its own: enforced here, the allow-list would confine the tests."""
    code = ("import threading, time; from autograder.worker import confine; "
            "threading.Thread(target=time.sleep, args=(5,), daemon=True).start(); "
            f"view = {{'cwd': '/tmp', 'tmp': '/tmp'}}; "
            f"confine._enforce(confine._allow_list(view, {ABI}), {ABI})")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "runs 2 threads before its allow-list is enforced" in run.stderr, run.stderr
