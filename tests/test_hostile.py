"""Broken submission files: an empty folder and hostile or broken zips each get a results file and a clear message.

Hostile code (what a submission does once it runs) is the catalogue's: tests/hostile/, graded by test_isolation.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, grade, results_file


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every case graded in one batch (two at a time, as an instructor would); returns (results by name, out folder)."""
    base = tmp_path_factory.mktemp("hostile")
    submissions = base / "submissions"
    (submissions / "empty").mkdir(parents=True)
    paths = [submissions / "empty", *_zips(submissions)]
    return grade(paths, base / "out"), base / "out"


def _zips(folder: Path) -> list[Path]:
    traversal = folder / "traversal.zip"
    with zipfile.ZipFile(traversal, "w") as archive:
        archive.writestr("masking.py", "import torch\n")
        archive.writestr("../../escaped.py", "print('escaped')\n")
    corrupted = folder / "corrupted.zip"
    corrupted.write_bytes(b"PK\x03\x04" + os.urandom(300))
    nested = folder / "nested.zip"
    with zipfile.ZipFile(nested, "w") as archive:
        archive.writestr("my folder/masking.py", (REPO / "solutions" / "masking" / "masking.py").read_text())
        archive.writestr("__MACOSX/my folder/._masking.py", "junk")
    return [traversal, corrupted, nested]


def test_every_submission_gets_a_results_file(graded):
    results, out = graded
    assert set(results) == {"empty", "traversal", "corrupted", "nested"}
    for name in results:
        data = results_file(out, name)
        assert data["tests"] or data["output"], name
        assert data["score"] <= data["extra_data"]["max_score"], name


def test_empty_folder(graded):
    assert "empty" in graded[0]["empty"].output


def test_unsafe_and_corrupted_zips(graded):
    results = graded[0]
    assert "unsafe entry" in results["traversal"].output
    assert not (graded[1].parent / "escaped.py").exists()
    assert "not a readable zip" in results["corrupted"].output
    nested = results["nested"]
    assert nested.score == nested.max_score > 0
