"""What a worker writes to disk (``autograder/sandbox/diskwatch.py``): past ``tmp_mb`` in its folder and its TMPDIR
together (files it removed but holds open included), or past ``FILES_ALLOWED`` new files, the worker is stopped and the
student told why, in every mode; within the limit the same writes go through (the control)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from support.machine import is_root

from autograder.grading.proxy import Student, StudentCrashed
from autograder.sandbox import cgroups, diskwatch
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation

PROBE = r'''
import os, tempfile, time


def fill(count, mb, where="."):
    """Write ``count`` files of ``mb`` MB in ``where`` ("tmp": the temporary folder); how many were written."""
    folder = tempfile.gettempdir() if where == "tmp" else where
    for number in range(count):
        with open(os.path.join(folder, f"fill-{number}"), "wb") as handle:
            handle.write(os.urandom(1 << 20) * mb)
        time.sleep(0.02)
    return count


def hide(count, mb):
    """Write ``count`` files of ``mb`` MB, each removed at once but kept open: on disk, and in no folder."""
    held = []
    for number in range(count):
        with open(f"hidden-{number}", "wb") as handle:
            handle.write(os.urandom(1 << 20) * mb)
        held.append(os.open(f"hidden-{number}", os.O_RDONLY))
        os.unlink(f"hidden-{number}")
        time.sleep(0.02)
    time.sleep(2)
    return count


def scatter(count):
    """Make ``count`` empty files."""
    for number in range(count):
        open(f"empty-{number}", "w").close()
    time.sleep(2)
    return count
'''

MODES = ["namespaces", "permissions", "limits"] if is_root else ["limits"]


@pytest.fixture
def staged():
    folder = Path(tempfile.mkdtemp(prefix="diskwatch-test-"))
    os.chmod(folder, 0o711)  # as a batch stages: a sandbox uid passes through
    (folder / "submission").mkdir()
    (folder / "submission" / "probe.py").write_text(PROBE)
    yield folder / "submission"
    shutil.rmtree(folder)


def _student(submission: Path, mode: str, tmp_mb: int, groups: tuple[str, ...] = ()) -> Student:
    return Student(submission, [{"name": "probe"}], Limits(tmp_mb=tmp_mb, threads=1), Isolation(mode, cgroups=groups))


@pytest.mark.parametrize("mode", MODES)
def test_a_worker_that_writes_too_much_is_stopped_and_told_why(mode, staged):
    student = _student(staged, mode, 30)
    try:
        with pytest.raises(StudentCrashed, match="stopped for writing more than 30 MB to disk"):
            student.probe.fill(60, 5)  # 300 MB, 5 MB at a time
    finally:
        student.close()
    written = sum(path.stat().st_size for path in staged.glob("fill-*"))
    assert 30 << 20 < written < 200 << 20


@pytest.mark.parametrize("mode", MODES)
def test_within_the_limit_the_same_writes_go_through(mode, staged):
    student = _student(staged, mode, 100)
    try:
        assert student.probe.fill(12, 5) == 12
    finally:
        student.close()


@pytest.mark.parametrize("grouped", [False, True] if "pids" in cgroups.usable() else [False],
                         ids=lambda grouped: "by control group" if grouped else "by uid or parent")
@pytest.mark.parametrize("mode", MODES)
def test_files_removed_but_held_open_count_too(mode, grouped, staged):
    student = _student(staged, mode, 30, tuple(cgroups.usable()) if grouped else ())
    try:
        with pytest.raises(StudentCrashed, match="more than 30 MB"):
            student.probe.hide(12, 5)
    finally:
        student.close()


@pytest.mark.skipif(not is_root, reason="a TMPDIR of its own on disk needs permissions mode, as root")
def test_the_temporary_folder_counts_too(staged):
    student = _student(staged, "permissions", 30)
    try:
        with pytest.raises(StudentCrashed, match="more than 30 MB"):
            student.probe.fill(60, 5, "tmp")
    finally:
        student.close()


def test_so_do_files_however_small(staged):
    student = _student(staged, MODES[0], 30)
    try:
        with pytest.raises(StudentCrashed, match=f"more than {diskwatch.FILES_ALLOWED} files"):
            student.probe.scatter(diskwatch.FILES_ALLOWED + 500)
    finally:
        student.close()
