"""What the machine gives a test: root or not, a folder of /tmp of its own, and a chain of folders past PATH_MAX."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder import trees

is_root = os.geteuid() == 0
needs_root = pytest.mark.skipif(not is_root, reason="isolation from other users needs a root grader")


def chain(folder: Path, levels: int) -> None:
    """A chain of ``levels`` folders in ``folder``, as a submission's code makes one (each level opened from the one
    above, far past PATH_MAX): long names and names no text encoding reads, a file and a link on the way, and
    folders of mode 0 that their owner cannot even list."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for level in range(levels):
        name = "level\n\udcff" if level % 3 else "x" * 200
        os.mkdir(name, dir_fd=descriptor)
        below = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=descriptor)
        if level % 1000 == 0:
            os.symlink("/etc/passwd", "passwd", dir_fd=below)
            os.close(os.open("file", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=below))
            os.chmod(name, 0, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = below
    os.close(descriptor)


@contextlib.contextmanager
def private_tmp() -> Iterator[Path]:
    """A folder in /tmp of this test's own, as TMPDIR and tempfile's folder within the block: what the graders started
    there leave behind is the test's to find, whatever runs beside it. Mode 0711, as sandbox uids pass through /tmp
    to their own folders; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="test-tmp-", dir="/tmp"))
    os.chmod(folder, 0o711)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TMPDIR", str(folder))
            patch.setattr(tempfile, "tempdir", str(folder))
            yield folder
    finally:
        trees.remove(folder)  # whatever a failed test left there (shutil.rmtree raises on a deep chain)
