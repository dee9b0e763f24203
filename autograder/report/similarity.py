"""Pairs of submissions whose code is suspiciously similar once the starter code is discounted, for the class report.

The detector is copydetect's: MOSS's winnowing over tokenised code (names, strings and numbers become placeholders,
so renaming variables does not hide a copy), with the assignment's skeleton as the boilerplate file, so that what
every student was given matches nobody. Each submission's code files are staged as grading stages them (a zip is
checked before it is extracted, links are not followed) and compared file by file with the same file of every other
submission (``masking.py`` with ``masking.py``); a notebook is compared by its code cells. Data files (predictions)
are not code and are left out.

A class is not compared pair by pair: the pairs compared are those an index of the fingerprints proposes
(``candidates``), MOSS's way: an inverted index from each winnowed fingerprint to the files that hold it, as a
sparse matrix, so that only files that share a fingerprint meet, and each pair's share is estimated at once in
scipy's sparse product. The estimate is a bound that copydetect's share never exceeds, so the index proposes every
pair that all pairs would report (``tests/report/test_similarity.py``; ``bench/scale.py`` compares both ways):
copydetect covers k characters from each position of a fingerprint found in the other file (``NOISE``, fewer where they
overlap) and divides by the characters all the file's positions cover, so the share is at most k times the positions
found, over that. Counting positions, not fingerprints, matters: a file whose code repeats one pattern matches a
file that holds the pattern once. A MinHash LSH prefilter, which sees each fingerprint once however often it
repeats, was tried and missed such pairs; so did the share of positions alone, which is no bound. A pair proposed is
measured as copydetect measures it, on arrays (``Overlap``): copydetect's own comparison loops in Python over every
shared fingerprint, which a class of near-copies of one long file pays thousands of times; only the pairs shown are
compared by copydetect, for its highlighted code.

Each file is fingerprinted by its first ``MAX_FINGERPRINTED`` bytes of code only: copydetect tokenises and winnows in
Python, at about 20 KB a second on a loaded machine, and a 6 MB file (within the size a code file may have) held the
report back 110 to 140 s after the last grading (issue 41). The limit is five times the largest reference file; a
file cut there is said in the log.

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
from copydetect.utils import get_copied_slices, highlight_overlap
from scipy import sparse

from autograder import scratch
from autograder.course import Assignment
from autograder.grading.answers import NotebookError, cells
from autograder.notebook_cells import notebook_cell_code
from autograder.submission import SubmissionError, stage

log = logging.getLogger("autograder.report.similarity")

NOISE, WINDOW = NOISE_THRESHOLD, GUARANTEE_THRESHOLD - NOISE_THRESHOLD + 1  # copydetect's defaults (as MOSS's)
THRESHOLD = 0.5  # the share of a file's fingerprints (beyond the skeleton's) found in the other file, to report
BLOCK = 512  # files whose shares with every other are estimated at once: bounds the product's memory in a big class
MAX_FINGERPRINTED = 128 << 10  # bytes of a file's code fingerprinted (the module docstring)


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
    return most_similar(fingerprints(assignment, sources), threshold, shown)


def fingerprints(assignment: Assignment, sources: dict[str, Path]) -> dict[str, dict[str, CodeFingerprint]]:
    """Each code file's fingerprints (beyond the skeleton's) by submission, by file name (``masking.py``)."""
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
    return prints


def most_similar(prints: dict[str, dict[str, CodeFingerprint]], threshold: float = THRESHOLD, shown: int = 25,
                 indexed: bool = True) -> tuple[list[Pair], int]:
    """``similar_pairs`` of ``fingerprints``. ``indexed``: compare the pairs the index proposes (``candidates``);
    False compares all pairs (the benchmark's baseline, and the test's)."""
    found = []
    proposed = candidates(prints, threshold) if indexed else {
        file: list(itertools.combinations(sorted(by_name), 2)) for file, by_name in prints.items()}
    overlaps = {file: {name: Overlap(fingerprint) for name, fingerprint in by_name.items()}
                for file, by_name in prints.items()}
    for file, names in proposed.items():
        for first, second in names:
            shares = overlaps[file][first].shares(overlaps[file][second])
            if max(shares) >= threshold:
                found.append((max(shares), first, second, file))
    found.sort(key=lambda item: (-item[0], item[1], item[2]))
    pairs = []
    for _, first, second, file in found[:shown]:
        _, shares, slices = compare_files(prints[file][first], prints[file][second])
        pairs.append(Pair(first, second, file, float(shares[0]), float(shares[1]),
                          _highlighted(prints[file][first], slices[0], "red"),
                          _highlighted(prints[file][second], slices[1], "green")))
    return pairs, len(found)


class Overlap:
    """One file's fingerprints as arrays, to measure what copydetect's ``compare_files`` measures (the share of each
    file's code covered by k-grams found in the other) without its loop over every shared fingerprint in Python:
    copies of a long file share hundreds, and a class of copies has thousands of pairs."""

    def __init__(self, fingerprint: CodeFingerprint):
        self.k, self.coverage = fingerprint.k, fingerprint.token_coverage
        self.empty = not fingerprint.filtered_code
        self.hashes = np.fromiter(fingerprint.hashes, dtype=np.int64, count=len(fingerprint.hashes))
        where = fingerprint.hash_idx
        self.positions = np.array([i for h in where for i in where[h]], dtype=np.int64)
        self.owners = np.array([h for h in where for _ in where[h]], dtype=np.int64)  # the hash at each position

    def shares(self, other: Overlap) -> tuple[float, float]:
        """The share of this file's code and of ``other``'s found in the other one (0 to 1 each), as
        ``compare_files`` computes them."""
        common = np.intersect1d(self.hashes, other.hashes, assume_unique=True)
        if not len(common):
            return 0.0, 0.0
        return self._share(common), other._share(common)

    def _share(self, common: np.ndarray) -> float:
        if self.empty:
            return 0.0
        starts, ends = get_copied_slices(self.positions[np.isin(self.owners, common)], self.k)
        return float(np.sum(ends - starts) / self.coverage)


def candidates(prints: dict[str, dict[str, CodeFingerprint]], threshold: float = THRESHOLD
               ) -> dict[str, list[tuple[str, str]]]:
    """The pairs of submissions (names in order) worth comparing, by file: those whose bound on copydetect's share
    (see the module's docstring) reaches ``threshold`` one way or the other. The work grows with the pairs of files
    that share a fingerprint, not with all pairs."""
    proposed = {}
    for file, by_name in prints.items():
        names = sorted(name for name, fingerprint in by_name.items()
                       if fingerprint.hash_idx and fingerprint.token_coverage > 0)
        columns: dict[int, int] = {}
        rows, cols, weights = [], [], []
        for row, name in enumerate(names):
            fingerprint = by_name[name]
            for value, found in fingerprint.hash_idx.items():
                rows.append(row)
                cols.append(columns.setdefault(value, len(columns)))
                weights.append(len(found) * fingerprint.k / fingerprint.token_coverage)
        weighted = sparse.csr_matrix((weights, (rows, cols)), shape=(len(names), len(columns)))
        present = (weighted > 0).astype(np.float64).T.tocsr()
        pairs = set()
        for first in range(0, len(names), BLOCK):
            bounds = (weighted[first:first + BLOCK] @ present).tocoo()  # [a, b]: a's share in b is at most this
            over = bounds.data >= threshold
            for a, b in zip(bounds.row[over] + first, bounds.col[over], strict=True):
                if a != b:
                    pairs.add((names[min(a, b)], names[max(a, b)]))
        proposed[file] = sorted(pairs)
    return proposed


def _highlighted(fingerprint: CodeFingerprint, slices, colour: str) -> str:
    """The file as escaped HTML, the matching code in ``<span class='highlight-COLOUR'>``, long runs without a match
    cut short."""
    text, _ = highlight_overlap(fingerprint.raw_code, slices, f"<span class='highlight-{colour}'>", "</span>",
                                truncate=10, escape_html=True)
    return text


def _code_files(folder: Path, into: Path, assignment: Assignment) -> dict[str, Path]:
    """Copy ``folder``'s code files of ``assignment`` into ``into`` as Python text (a notebook: its code cells), at
    most ``MAX_FINGERPRINTED`` bytes of each; returns the copies by the submitted file's name."""
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
        encoded = text.encode("utf-8", "replace")
        if len(encoded) > MAX_FINGERPRINTED:
            log.info("similarity: %s's %s is compared by its first %d KB of code, of %d KB", folder.name, name,
                     MAX_FINGERPRINTED >> 10, len(encoded) >> 10)
            text = encoded[:MAX_FINGERPRINTED].decode("utf-8", "ignore")
        copies[name] = into / f"{name}.py"
        copies[name].write_text(text, encoding="utf-8")
    return copies
