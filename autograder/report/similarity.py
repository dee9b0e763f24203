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

import itertools
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.defaults import GUARANTEE_THRESHOLD, NOISE_THRESHOLD
from copydetect.utils import highlight_overlap

from autograder import scratch
from autograder.course import Assignment
from autograder.grading.answers import NotebookError, cells
from autograder.notebook_cells import notebook_cell_code
from autograder.submission import SubmissionError, stage

log = logging.getLogger("autograder.report.similarity")

NOISE, WINDOW = NOISE_THRESHOLD, GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1  # copydetect's defaults (as MOSS's)
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


def similar_pairs(assignment: Assignment, sources: dict[str, Path], threshold: float = THRESHOLD,
                  shown: int = 25) -> tuple[list[Pair], int]:
    """The ``shown`` most similar pairs among ``sources`` (submission name -> the folder or zip graded) with a file
    of which at least ``threshold`` matches the other's, most similar first, and how many pairs are over it. Only
    the shown pairs get their code highlighted (a class of near-identical short solutions has thousands of pairs).
    Submissions that cannot be staged are left out (the report lists them among those not graded)."""
    with scratch.folder("similarity") as root:
        boilerplate = _code_files(assignment.skeleton_dir, root / "boilerplate", assignment)
        skeleton = [h for path in boilerplate.values() for h in CodeFingerprint(str(path), NOISE, 1).hashes]
        ignored = np.unique(np.array(skeleton)) if skeleton else None
        prints: dict[str, dict[str, CodeFingerprint]] = {}
        for name, source in sources.items():
            try:
                staged = stage(source, assignment.files, root / "staging" / name, assignment.carried)
            except (SubmissionError, OSError) as exc:
                log.info("similarity: %s left out (%s)", name, exc)
                continue
            for file, path in _code_files(staged, root / "code" / name, assignment).items():
                prints.setdefault(file, {})[name] = CodeFingerprint(str(path), NOISE, WINDOW, ignored)
    found = []
    for file, by_name in prints.items():
        for first, second in itertools.combinations(sorted(by_name), 2):
            _, shares, slices = compare_files(by_name[first], by_name[second])
            if max(shares) >= threshold:
                found.append((max(shares), first, second, file, shares, slices))
    found.sort(key=lambda item: (-item[0], item[1], item[2]))
    pairs = [Pair(first, second, file, float(shares[0]), float(shares[1]),
                  _highlighted(prints[file][first], slices[0], "red"), _highlighted(prints[file][second], slices[1],
                                                                                   "green"))
             for _, first, second, file, shares, slices in found[:shown]]
    return pairs, len(found)


def _highlighted(fingerprint: CodeFingerprint, slices, colour: str) -> str:
    """The file as escaped HTML, the matching code in ``<span class='highlight-COLOUR'>``, long runs without a match
    cut short."""
    text, _ = highlight_overlap(fingerprint.raw_code, slices, f"<span class='highlight-{colour}'>", "</span>",
                                truncate=10, escape_html=True)
    return text


def _code_files(folder: Path, into: Path, assignment: Assignment) -> dict[str, Path]:
    """Copy ``folder``'s code files of ``assignment`` into ``into`` as Python text (a notebook: its code cells);
    returns the copies by the submitted file's name."""
    into.mkdir(parents=True, exist_ok=True)
    copies = {}
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
        copies[name] = into / f"{name}.py"
        copies[name].write_text(text, encoding="utf-8")
    return copies
