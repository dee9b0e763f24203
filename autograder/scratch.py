"""The grader's folders in the temporary folder (``tempfile.gettempdir()``), the sweep of those a dead grader left, and
files written whole or not at all (``replacing``: a reader sees the old file or the new one, never a part of one).

A grader killed outright runs no cleanup: a SIGKILL, the OOM killer, a Ray worker killed or lost with its node, a batch
stopped by ``kill -9``. What it made in ``/tmp`` then stayed there for good (a batch's runners, a submission's staged
copy, a sandbox's private ``/tmp``, a Ray task's packed submission and results). Each folder made here is locked
(``flock`` on the folder itself) by the process that made it, until it removes the folder; the kernel drops a lock when
the last process holding it dies, however it dies. So a folder of ours (``KINDS``, owned by this user) whose lock anyone
can take belongs to no live grader: the next folder made here, by any grader on the machine, first sweeps those
(``sweep``; at most once per ``GRACE_SECONDS`` in a process). A folder younger than ``GRACE_SECONDS`` is never swept:
its maker may not have locked it yet.

The lock is on an open file description, which a forked child shares: a runner's workers' zygote keeps its runner's
folders locked while it lives, which is harmless. No student process ever holds one: workers close every descriptor
they inherit (``autograder.forking``) or are started with ``close_fds``, so none can unlock a live grader's folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from autograder import trees

PREFIX = "autograder-"
# The kinds of folder made here, by what holds them (``make``'s ``kind``); only these are ever swept.
KINDS = ("batch", "run", "worker", "probe", "reference", "task", "validate", "build", "selftest", "pack",
         "similarity", "otter-assign", "export", "resume", "mutate",
         "doctor")
GRACE_SECONDS = 60.0
_held: dict[Path, int] = {}  # a folder made by this process -> the descriptor that locks it
_last_sweep = -GRACE_SECONDS


def make(kind: str) -> Path:
    """A new folder ``autograder-KIND-XXXXXXXX`` (mode 0700) in the temporary folder, locked by this process until
    ``remove``; dead graders' folders there are swept first."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of scratch folder {kind!r}: add it to KINDS")
    global _last_sweep
    if time.monotonic() - _last_sweep >= GRACE_SECONDS:
        _last_sweep = time.monotonic()
        sweep()
    path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-"))
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    _held[path] = descriptor
    return path


def remove(path: Path) -> None:
    """Remove a folder ``make`` gave this process, then drop its lock."""
    path = Path(path)
    trees.remove(path)
    descriptor = _held.pop(path, None)
    if descriptor is not None:
        os.close(descriptor)  # not LOCK_UN: a forked child sharing the lock may still be using the folder


@contextlib.contextmanager
def folder(kind: str) -> Iterator[Path]:
    """``make`` a folder for the block, ``remove`` it afterwards."""
    path = make(kind)
    try:
        yield path
    finally:
        remove(path)


def sweep(base: Path | None = None) -> list[Path]:
    """Remove the folders of ``KINDS`` in ``base`` (the temporary folder) that this user owns and that no live process
    holds locked, older than ``GRACE_SECONDS``; returns them. Never follows a link: a student's files inside are
    removed as names, and a link or a folder of another user named like ours is left alone."""
    base = Path(base or tempfile.gettempdir())
    removed = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    young = time.time() - GRACE_SECONDS
    for entry in entries:
        if not entry.name.startswith(tuple(f"{PREFIX}{kind}-" for kind in KINDS)):
            continue
        try:
            status = entry.stat(follow_symlinks=False)
            descriptor = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            if status.st_uid != os.geteuid() or status.st_mtime > young or os.fstat(descriptor).st_ino != status.st_ino:
                continue
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its grader lives
            continue
        else:
            trees.remove(entry.path)
            removed.append(Path(entry.path))
        finally:
            os.close(descriptor)
    return removed


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary sibling of ``path`` to write; when the block ends it replaces ``path`` at once (mode 0644), and when
    the block raises it is removed and ``path`` is left as it was. The one way the grader writes a file that another
    process may read while it is written: results, gradebooks, shared expected values."""
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(handle)
    temp = Path(name)
    try:
        yield temp
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through ``replacing``."""
    with replacing(path) as temp:
        temp.write_text(text, encoding="utf-8")
