"""Broken and oversized submission files, graded by ``autograder grade`` in one batch: an empty folder, hostile or
broken zips, a zip deeper than the limit, zip bombs, a 90 MB notebook in a small zip, a notebook nested too deeply
to parse; each gets a results file and a clear message, the batch's gradebook, summary and report are written (the
similarity check reads every notebook again), a chain of folders a killed batch left in the temporary folder does not
stop it, and neither the command nor anything it started grows past its memory bound.

Hostile code (what a submission does once it runs) is the catalogue's: tests/hostile/, graded by test_hostile_catalogue.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from support.machine import chain, private_tmp
from support.submissions import REPO, results_file

from autograder import scratch, submission
from autograder.results import Results

# The command's own peak resident memory, and the highest of every process it started (runners, their workers and
# zygotes), measured by the command's process as it exits: with these submissions, on the CPU, 305 MB and 368 MB;
# with the 90 MB notebook let through (no ratio or size limit), 1094 MB and 1093 MB. The command's own is its VmHWM:
# its ru_maxrss would count the process that started it (Linux keeps it across exec), a pytest worker grown by the
# tests before this one (823 MB in make test on 2026-11-27).
COMMAND_PEAK_MB, STARTED_PEAK_MB = 800, 800
MEASURED = """
import atexit, json, resource, sys
from autograder import cli
cli.main(sys.argv[2:])
atexit._run_exitfuncs()  # as cli.run: the zygotes stopped and reaped, so that their peaks count
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
peaks = {"RUSAGE_SELF": int(status["VmHWM"].split()[0]) >> 10,
         "RUSAGE_CHILDREN": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10}
open(PEAKS, "w").write(json.dumps(peaks))
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every case graded in one batch (two at a time, as an instructor would), by the command in a process of its
    own; returns (results by name, out folder, peak resident MB of the command and of what it started)."""
    base = tmp_path_factory.mktemp("hostile")
    submissions = base / "submissions"
    (submissions / "empty").mkdir(parents=True)
    paths = [submissions / "empty", *_zips(submissions), *_notebooks(submissions)]
    out, peaks = base / "out", base / "peaks.json"
    with private_tmp() as tmp:
        left = tmp / "autograder-batch-killed00"  # a killed batch's folder, holding a student's chain of folders
        left.mkdir()
        chain(left, 5000)
        past = time.time() - 2 * scratch.GRACE_SECONDS
        os.utime(left, (past, past))
        code = MEASURED.replace("PEAKS", repr(str(peaks)))
        subprocess.run([sys.executable, "-c", code, "--", "grade", *map(str, paths), "--out", str(out), "--jobs", "2",
                        "--quiet"], env={**os.environ, "TMPDIR": str(tmp)}, cwd=REPO, check=False, timeout=600)
        assert not left.exists(), "the killed batch's folder was not swept"
    results = {p.name: Results.from_gradescope(json.loads((p / "results.json").read_text()))
               for p in out.iterdir() if (p / "results.json").is_file()}
    return results, out, json.loads(peaks.read_text())


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
    deep = folder / "deep.zip"
    with zipfile.ZipFile(deep, "w") as archive:
        archive.writestr("masking.py", "import torch\n")
        archive.writestr("a/" * 1000 + "masking.py", "import torch\n")
    many = folder / "many.zip"
    with zipfile.ZipFile(many, "w") as archive:
        archive.writestr("masking.py", "import torch\n")
        for number in range(submission.MAX_FILES):
            archive.writestr(f"empty/{number}", "")
    bomb = folder / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("masking.py", "import torch\n")
        archive.writestr("data.bin", bytes(16 << 20))
    return [traversal, corrupted, nested, deep, many, bomb]


def _notebooks(folder: Path) -> list[Path]:
    """Notebooks of the attention assignment: 90 MB of outputs in a small zip, and one nested too deeply to parse."""
    notebook = json.loads((REPO / "assignments" / "attention" / "attention.ipynb").read_text())
    output = {"output_type": "stream", "name": "stdout", "text": ["0\n"]}  # 62 bytes of JSON, a few hundred parsed
    notebook["cells"][0]["outputs"] = [output] * ((90 << 20) // 62)
    large = folder / "large_notebook.zip"
    with zipfile.ZipFile(large, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("attention.ipynb", json.dumps(notebook))
    deep = folder / "deep_notebook"
    deep.mkdir()
    (deep / "attention.ipynb").write_text('{"cells": [], "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return [large, deep]


def test_every_submission_gets_a_results_file_and_the_batch_its_files(graded):
    results, out, _ = graded
    assert set(results) == {"empty", "traversal", "corrupted", "nested", "deep", "many", "bomb", "large_notebook",
                            "deep_notebook"}
    for name in results:
        data = results_file(out, name)
        assert data["tests"] or data["output"], name
        assert data["score"] <= data["extra_data"]["max_score"], name
    for name in ("gradebook.csv", "summary.md", "report.html"):
        assert (out / name).is_file(), name


def test_empty_folder(graded):
    assert "empty" in graded[0]["empty"].output


def test_unsafe_and_corrupted_zips(graded):
    results = graded[0]
    assert "unsafe entry" in results["traversal"].output
    assert not (graded[1].parent / "escaped.py").exists()
    assert "not a readable zip" in results["corrupted"].output
    nested = results["nested"]
    assert nested.score == nested.max_score > 0


def test_deep_and_bomb_zips_are_refused_with_what_to_do(graded):
    results = graded[0]
    assert f"more than {submission.MAX_DEPTH} levels of folders" in results["deep"].output
    assert f"more than {submission.MAX_FILES} entries" in results["many"].output or \
        f"{submission.MAX_FILES + 1} entries (limit {submission.MAX_FILES})" in results["many"].output
    assert "data.bin" in results["bomb"].output and "more than 100 times" in results["bomb"].output


def test_a_large_notebook_is_refused_unparsed_and_a_deep_one_is_a_message(graded):
    results = graded[0]
    assert "attention.ipynb" in results["large_notebook"].output and "more than" in results["large_notebook"].output
    deep = results["deep_notebook"]
    assert deep.score == 0 and "nested too deeply" in "\n".join([deep.output, *(t.output for t in deep.tests)])


def test_neither_the_command_nor_what_it_started_grew_past_its_bound(graded):
    peaks = graded[2]
    assert peaks["RUSAGE_SELF"] < COMMAND_PEAK_MB and peaks["RUSAGE_CHILDREN"] < STARTED_PEAK_MB, peaks
