"""A grader killed outright leaves its folders in /tmp: the next grader's first folder sweeps them, never a live one."""

from __future__ import annotations

import ast
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from support.machine import chain, needs_root, private_tmp
from support.submissions import REPO

from autograder import scratch, trees

# Makes a folder, says where and which process holds it, and waits; "fork" hands its lock to a child that outlives it.
MAKER = textwrap.dedent("""
    import os, sys, time
    from autograder import scratch
    folder = scratch.make("run")
    (folder / "staged.py").write_text("x = 1\\n")
    child = os.fork() if sys.argv[1] == "fork" else 0
    if child:
        print(folder, child, flush=True)
        os._exit(0)  # no cleanup: the child holds the lock now
    if sys.argv[1] != "fork":
        print(folder, os.getpid(), flush=True)
    time.sleep(600)
""")


def _maker(tmp: Path, how: str = "wait") -> tuple[Path, int]:
    """A process that made a folder in ``tmp`` (``scratch.make``): the folder, and the pid of what holds it."""
    process = subprocess.Popen([sys.executable, "-c", MAKER, how], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(tmp)}, cwd=REPO)
    folder, pid = process.stdout.readline().split()
    process.stdout.close()
    if how == "fork":
        process.wait()
    assert Path(folder).parent == tmp and (Path(folder) / "staged.py").is_file()
    return Path(folder), int(pid)


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    while Path(f"/proc/{pid}").exists():  # a forked child is reaped by whoever adopted it
        time.sleep(0.05)


def _aged(*folders: Path) -> None:
    """As if made two grace periods ago."""
    for folder in folders:
        past = time.time() - 2 * scratch.GRACE_SECONDS
        os.utime(folder, (past, past), follow_symlinks=False)


def _locked(folder: Path) -> bool:
    """Whether a live process holds ``folder`` (``scratch.make``'s lock)."""
    with contextlib.suppress(FileNotFoundError):
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(descriptor)
    return False


def _make_and_sweep(tmp: Path, monkeypatch) -> Path:
    """Make a folder in ``tmp`` (``private_tmp``'s) as the next grader would: its first here, so it sweeps."""
    monkeypatch.setattr(scratch, "_last_sweep", -scratch.GRACE_SECONDS)
    with scratch.folder("batch") as ours:
        assert ours.parent == tmp
    return ours


def test_a_killed_makers_folder_is_swept_and_a_live_ones_kept(monkeypatch):
    with private_tmp() as tmp:
        killed, victim = _maker(tmp)
        live, alive = _maker(tmp)
        handed, child = _maker(tmp, "fork")  # its maker exited without cleaning up; its child lives
        try:
            _kill(victim)
            _aged(killed, live, handed)
            _make_and_sweep(tmp, monkeypatch)
            assert not killed.exists()
            assert live.is_dir() and handed.is_dir(), "a folder whose lock a live process holds was swept"
            _kill(child)
            _make_and_sweep(tmp, monkeypatch)
            assert not handed.exists() and live.is_dir()
        finally:
            for pid in (alive, child):
                with contextlib.suppress(ProcessLookupError):
                    _kill(pid)


def test_young_folders_other_users_and_links_are_left(monkeypatch):
    with private_tmp() as tmp:
        young = tmp / "autograder-run-young000"
        young.mkdir()  # unlocked, but its maker may not have locked it yet
        foreign = tmp / "autograder-bench-notours0"  # a kind never made here (a benchmark's own folder)
        foreign.mkdir()
        target = tmp / "precious"
        target.mkdir()
        (target / "keep.txt").write_text("keep")
        link = tmp / "autograder-run-alink0000"
        link.symlink_to(target)
        _aged(foreign, target, link)
        _make_and_sweep(tmp, monkeypatch)
        assert young.is_dir() and foreign.is_dir() and link.is_symlink() and (target / "keep.txt").is_file()


def test_a_students_links_inside_a_dead_folder_are_removed_not_followed(monkeypatch):
    with private_tmp() as tmp:
        outside = tmp / "outside"
        outside.mkdir()
        (outside / "grader.txt").write_text("the grader's")
        dead = tmp / "autograder-worker-dead0000"  # an old grader's folder, never locked
        (dead / "tmp").mkdir(parents=True)
        (dead / "tmp" / "link").symlink_to(outside)
        (dead / "tmp" / "file").symlink_to(outside / "grader.txt")
        _aged(dead)
        _make_and_sweep(tmp, monkeypatch)
        assert not dead.exists() and (outside / "grader.txt").read_text() == "the grader's"


def test_a_chain_of_folders_deeper_than_any_path_is_swept(monkeypatch):
    """A dead grader's folder holding a chain of 5000 folders (a submission made it at import) is removed, folders of
    mode 0 and links inside included, and the next grader starts: ``shutil.rmtree`` raised RecursionError here,
    from every later ``autograder grade``."""
    with private_tmp() as tmp:
        dead = tmp / "autograder-run-deep0000"
        dead.mkdir()
        chain(dead, 5000)
        _aged(dead)
        _make_and_sweep(tmp, monkeypatch)
        assert not dead.exists() and Path("/etc/passwd").is_file()


def test_a_wide_folder_and_a_file_are_removed(tmp_path):
    wide = tmp_path / "wide"
    for number in range(3000):
        (wide / str(number)).mkdir(parents=True)
    trees.remove(wide)
    (tmp_path / "file").write_text("x")
    trees.remove(tmp_path / "file")
    trees.remove(tmp_path / "missing")
    assert not list(tmp_path.iterdir())


@needs_root
def test_a_folder_of_another_user_is_left(monkeypatch):
    with private_tmp() as tmp:
        theirs = tmp / "autograder-run-theirs00"
        theirs.mkdir()
        os.chown(theirs, 65534, 65534)
        _aged(theirs)
        _make_and_sweep(tmp, monkeypatch)
        assert theirs.is_dir()


def test_a_batch_killed_outright_leaves_folders_the_next_grader_sweeps(monkeypatch, tmp_path):
    """``kill -9`` of `autograder grade` mid-grading: its batch folder stays, with its runner's folder if the runner
    died before it could remove it (a parent-death SIGTERM during staging, on a loaded machine); once no runner of it
    lives, the next grader removes all of it."""
    with private_tmp() as tmp:
        looping = REPO / "examples" / "masking" / "infinite_loop"
        grading = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", str(looping), "--out",
                                    str(tmp_path / "out"), "--quiet"], env={**os.environ, "TMPDIR": str(tmp)}, cwd=REPO,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not list(tmp.glob("autograder-batch-*/autograder-run-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(tmp.glob("autograder-batch-*/autograder-run-*")), "the runner never staged the submission"
        grading.send_signal(signal.SIGKILL)
        grading.wait()
        while any(map(_locked, tmp.glob("autograder-batch-*/autograder-run-*"))) and time.monotonic() < deadline:
            time.sleep(0.1)  # the runner stops (removing its folder), or has died
        assert not any(map(_locked, tmp.glob("autograder-batch-*/autograder-run-*"))), "the runner outlived its batch"
        left = list(tmp.glob("autograder-batch-*"))
        assert len(left) == 1, left
        _aged(*left)
        _make_and_sweep(tmp, monkeypatch)
        assert not left[0].exists()


@pytest.mark.parametrize("kind", ["nope", "../batch"])
def test_unknown_kinds_are_refused(kind):
    with pytest.raises(ValueError, match="unknown kind"):
        scratch.make(kind)


def test_every_kind_the_code_asks_for_is_known():
    """A kind named in the code but missing from KINDS fails only when that path runs (`validate --mutate` without
    --out did, after its branch and the kinds' list met at a merge); read every literal kind from the source."""
    asked = {}
    for path in (REPO / "autograder").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "scratch"
                    and node.func.attr in ("make", "folder") and node.args
                    and isinstance(node.args[0], ast.Constant)):
                asked.setdefault(node.args[0].value, str(path.relative_to(REPO)))
    assert len(asked) >= 10, asked
    assert {kind: where for kind, where in asked.items() if kind not in scratch.KINDS} == {}
