"""Trees of folders that a submission or a sandbox uid made, walked and removed without recursion.

Student code can make any tree its files and its time allow: a chain of thousands of folders (deeper than
``PATH_MAX``, so no path names its bottom), a folder of a hundred thousand entries, names with newlines or bytes that
are not UTF-8, folders of mode 0 or 0500, links to anywhere. ``shutil.rmtree`` recurses once per level, and its
``ignore_errors`` does not catch the ``RecursionError`` a deep chain raises: one such chain stopped the grading
that met it, and every later one that swept the temporary folder. ``remove`` holds one folder open at a time and
climbs back through ``..``, checking that it is the folder it came from; ``walk`` reads a tree breadth first, so a
caller that counts levels and entries stops at its limit, having read no more than that.
"""

from __future__ import annotations

import collections
import contextlib
import os
import stat
from collections.abc import Collection, Iterator
from pathlib import Path

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove(path: Path | str) -> None:
    """Remove ``path`` and everything under it, never following a link (a link is removed as a name) and never
    raising: what cannot be removed (a mount point, a folder that changed under it) is left, the rest still goes.
    Folders that the owner cannot read or write (a student's ``chmod 0``) are opened up as they are met."""
    path = os.fspath(path)
    with contextlib.suppress(OSError):
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
        descriptor = _open(path)
        try:
            _empty(descriptor)
        finally:
            os.close(descriptor)
        os.rmdir(path)


def _empty(top: int) -> None:
    """Remove what the folder open as ``top`` holds. Each level on the way down is a frame: the folder's identity, its
    name in its parent and its sub-folders still to visit; only the deepest folder is open. A folder of another file
    system (a mount point) is not entered."""
    frames = [(_identity(top), "", _clear(top))]
    device = frames[0][0][0]
    current = os.dup(top)
    try:
        while frames:
            identity, name, pending = frames[-1]
            if pending:
                child = pending.pop()
                with contextlib.suppress(OSError):
                    opened = _open(child, current)
                    if _identity(opened)[0] != device:
                        os.close(opened)
                        continue
                    os.close(current)
                    current = opened
                    frames.append((_identity(current), child, _clear(current)))
                continue
            frames.pop()
            if not frames:
                break
            parent = os.open("..", _DIRECTORY, dir_fd=current)
            os.close(current)
            current = parent
            if _identity(current) != frames[-1][0]:  # the tree was moved while it was removed: stop here
                return
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=current)
    finally:
        os.close(current)


def _clear(descriptor: int) -> list[str]:
    """Unlink everything but folders in the open folder ``descriptor``; return its folders' names."""
    with contextlib.suppress(OSError):
        if stat.S_IMODE(os.fstat(descriptor).st_mode) & 0o700 != 0o700:
            os.fchmod(descriptor, 0o700)
    folders = []
    with contextlib.suppress(OSError), os.scandir(descriptor) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    os.unlink(entry.name, dir_fd=descriptor)
            except OSError:
                continue
    return folders


def _open(name: str, parent: int | None = None) -> int:
    """Open the folder ``name`` (in ``parent``) without following a link; one its owner cannot read is opened up."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent)  # a folder, not a link: O_NOFOLLOW would have said ELOOP
        return os.open(name, _DIRECTORY, dir_fd=parent)


def _identity(descriptor: int) -> tuple[int, int]:
    status = os.fstat(descriptor)
    return status.st_dev, status.st_ino


def walk(top: Path, skip: Collection[str] = ()) -> Iterator[tuple[int, os.DirEntry]]:
    """Every entry under ``top``, breadth first, with its depth (1 for what ``top`` holds). Links are entries, never
    followed into, and so are folders named in ``skip``. A caller that stops iterating at a limit has read no entry
    beyond it, nor a folder deeper than the entry it stopped at."""
    queue = collections.deque([(1, os.fspath(top))])
    while queue:
        depth, folder = queue.popleft()
        with os.scandir(folder) as entries:
            for entry in entries:
                yield depth, entry
                if entry.is_dir(follow_symlinks=False) and entry.name not in skip:
                    queue.append((depth + 1, entry.path))
