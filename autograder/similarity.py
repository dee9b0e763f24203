"""Pairs of submissions whose code is suspiciously similar once the starter code is discounted, for the class report.

The detector is copydetect's: MOSS's winnowing over tokenised code (names, strings and numbers become placeholders,
so renaming variables does not hide a copy), with the assignment's skeleton as the boilerplate file, so that what
every student was given matches nobody. Each submission's code files are staged as grading stages them (a zip is
checked before it is extracted, links are not followed) and compared file by file with the same file of every other
submission (``masking.py`` with ``masking.py``); a notebook is compared by its code cells. Data files (predictions)
are not code and are left out.

A pair is a lead for a person to read, never a verdict: two students who both copied the lecture's worked example
match each other too.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

from copydetect import CopyDetector

from autograder.assignment import Assignment
from autograder.notebook_cells import notebook_cell_code
from autograder.notebooks import NotebookError, cells
from autograder.submission import SubmissionError, stage

log = logging.getLogger("autograder.similarity")

THRESHOLD = 0.5  # the share of a file's fingerprints (beyond the skeleton's) found in the other file, to report


@dataclass
class Pair:
    """Two submissions' same file: the share of each one's fingerprints found in the other (0 to 1), and the two
    files as HTML with the matching code highlighted (copydetect's ``<span class='highlight-...'>``)."""

    first: str
    second: str
    file: str
    first_share: float
    second_share: float
    first_html: str
    second_html: str

    @property
    def share(self) -> float:
        return max(self.first_share, self.second_share)


def similar_pairs(assignment: Assignment, sources: dict[str, Path], threshold: float = THRESHOLD) -> list[Pair]:
    """The pairs among ``sources`` (submission name -> the folder or zip graded) with a file of which at least
    ``threshold`` matches the other's, most similar first. Submissions that cannot be staged are left out (the
    report lists them among those not graded)."""
    with tempfile.TemporaryDirectory(prefix="autograder-similarity-") as temp:
        root = Path(temp)
        submissions, boilerplate = root / "submissions", root / "boilerplate"
        _code_files(assignment.skeleton_dir, boilerplate, assignment)
        for name, source in sources.items():
            try:
                staged = stage(source, assignment.files, root / "staging" / name, assignment.carried)
            except (SubmissionError, OSError) as exc:
                log.info("similarity: %s left out (%s)", name, exc)
                continue
            _code_files(staged, submissions / name, assignment)
        if len([p for p in submissions.glob("*") if any(p.iterdir())]) < 2:
            return []
        detector = CopyDetector(test_dirs=[str(submissions)], ref_dirs=[str(submissions)],
                                boilerplate_dirs=[str(boilerplate)], extensions=["py"], display_t=threshold,
                                same_name_only=True, ignore_leaf=True, autoopen=False, silent=True, truncate=True)
        detector.run()
        pairs = []
        for first_share, second_share, first, second, first_html, second_html, _ in detector.get_copied_code_list():
            first, second = Path(first), Path(second)
            pairs.append(Pair(first.parent.name, second.parent.name, _original_name(first.name, assignment),
                              float(first_share), float(second_share), first_html, second_html))
    return sorted(pairs, key=lambda pair: (-pair.share, pair.first, pair.second))


def _code_files(folder: Path, into: Path, assignment: Assignment) -> None:
    """Copy ``folder``'s code files of ``assignment`` into ``into`` as Python text (a notebook: its code cells)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in assignment.files:
        path = folder / name
        if name.endswith(".py") and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
        elif name.endswith(".ipynb") and path.is_file():
            try:
                text = "\n\n".join(notebook_cell_code(c["source"]) for c in cells(path) if c.get("cell_type") == "code")
            except NotebookError:
                continue
        else:
            continue
        (into / f"{name}.py").write_text(text, encoding="utf-8")


def _original_name(copied: str, assignment: Assignment) -> str:
    """The submitted file's name from its copy's (``masking.py.py`` -> ``masking.py``)."""
    original = copied.removesuffix(".py")
    return original if original in assignment.files else copied
