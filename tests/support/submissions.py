"""Submissions built from the reference and graded with the real batch machinery, and what the tests read back."""

from __future__ import annotations

import json
from pathlib import Path

from autograder import course
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions
from autograder.results import Results

REPO = course.REPO_ROOT
MASKING = course.load("masking")
POSITIONS = course.load("positions")


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


def find_test(results: Results, fragment: str):
    """The one test whose name contains ``fragment``."""
    found = [t for t in results.tests if fragment in t.name]
    assert len(found) == 1, f"expected one test named like {fragment!r}, found {[t.name for t in found]}"
    return found[0]


def results_file(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text())
