"""Helpers for the harness's own tests: build submissions from the reference, grade them."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder import course, trees
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions
from autograder.results import Results

REPO = course.REPO_ROOT
MASKING = course.load("masking")
POSITIONS = course.load("positions")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files marked slow first, in their own order: make test runs the files two at a time (pytest-xdist,
    ``--dist loadfile``), and a long file left for last keeps one process busy while the other has nothing to do."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def reference_with(tmp: Path, name: str, appended: str = "", *, replace: str | None = None) -> Path:
    """A masking submission folder: the reference with ``appended`` code (later definitions win),
    or exactly ``replace`` when given."""
    folder = tmp / name
    folder.mkdir(parents=True)
    source = replace if replace is not None else (MASKING.solution_dir / "masking.py").read_text() + "\n" + appended
    (folder / "masking.py").write_text(source)
    return folder


def grade(paths: list[Path], out: Path, *, public_only: bool = True, workers: int = 2) -> dict[str, Results]:
    """Grade ``paths`` with the real batch machinery; results by submission name."""
    jobs = discover(paths, "masking")
    collected = grade_all(jobs, out, GradingOptions(public_only=public_only), workers=workers, progress=False)
    return {r.submission: r for r in collected}


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


def find_test(results: Results, fragment: str):
    """The one test whose name contains ``fragment``."""
    found = [t for t in results.tests if fragment in t.name]
    assert len(found) == 1, f"expected one test named like {fragment!r}, found {[t.name for t in found]}"
    return found[0]


def results_file(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())


is_root = os.geteuid() == 0
needs_root = pytest.mark.skipif(not is_root, reason="isolation from other users needs a root grader")


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
