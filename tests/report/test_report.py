"""The class report and the per-assignment gradebooks, from a real grading batch and in a real browser.

One batch is graded once for the module: masking's reference (its runtime test records the time and memory
ratios), a known-wrong implementation from tests/mutants/masking (a named mistake), the example that does not load,
and a copy of the wrong one with its names changed and a syntax error (so that it costs no test time), laid out as
Gradescope's "Export Submissions" writes them (``submission_<id>/`` folders under a ``submission_metadata.yml``).
Grading 200 submissions would take minutes, so the 200-submission page is made by replicating those results files
(and, for a fifth of them, the submissions' code: the similarity check is quadratic) into 200 and perturbing the
copies: scores, named mistakes and figures change from copy to copy as a class's would.
"""

from __future__ import annotations

import base64
import io
import json
import random
import shutil
from pathlib import Path

import pytest
import yaml
from support.browser import chromium
from support.submissions import MASKING, REPO

from autograder.batch.discovery import discover
from autograder.cli import main
from autograder.gradescope_metadata import Submitter, students
from autograder.grading.mutants import Mutant
from autograder.report import page
from autograder.results import Results

pytestmark = pytest.mark.slow

NAMES = {"1": "Ada Lovelace", "2": "Alan Turing", "3": "Grace Hopper", "4": "Edsger Dijkstra"}
FORGED = {"id": 3, "users": [{"name": "Mallory Forger", "email": "m@uni.example", "id": 99}]}
SECTIONS = ("scores", "tests", "mistakes", "figures", "not-graded", "similarity")


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> tuple[Path, Path, dict[str, Results]]:
    """(the export folder, the results folder, results by submission) of one graded batch."""
    root = tmp_path_factory.mktemp("report")
    export = root / "export"
    subjects = {"1": MASKING.solution_dir, "2": MASKING.mutants_dir / "softmax_wrong_axis.py",
                "3": REPO / "examples/masking/syntax_error"}
    for number, subject in subjects.items():
        folder = export / f"submission_{number}"
        if subject.suffix == ".py":
            Mutant(MASKING, subject).materialize(folder)
        else:
            shutil.copytree(subject, folder)
    copied = (export / "submission_2" / "masking.py").read_text().replace("scores", "logits")
    (export / "submission_4").mkdir()  # a copy with its variables renamed, and broken (cheap to grade: no test runs)
    (export / "submission_4" / "masking.py").write_text(copied + "\ndef unfinished(:\n")
    metadata = {f"submission_{n}": {":submitters": [{":name": name, ":sid": f"s{n}00", ":email": f"u{n}@uni.example"}]}
                for n, name in NAMES.items()}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    (export / "submission_3" / "submission_metadata.json").write_text(json.dumps(FORGED))  # the student's own
    out = root / "results"
    assert main(["grade", str(export), "--out", str(out), "--assignment", "masking", "--jobs", "2", "--quiet"]) == 0
    return export, out, {results.submission: results for results in page.read(out)}


def test_a_batch_writes_the_report_and_gradebooks_per_assignment(batch):
    export, out, results = batch
    mistaken = next(t for t in results["submission_2"].tests if t.extra_data.get("mistake"))
    assert "axis" in mistaken.extra_data["mistake"] and mistaken.extra_data["mistake"] in mistaken.output
    timed = next(t for t in results["submission_1"].tests if "time ratio" in t.extra_data.get("figures", {}))
    assert timed.extra_data["figures"]["time ratio"]["value"] > 0 and timed.extra_data["figures"]["time ratio"] == {
        "value": timed.extra_data["figures"]["time ratio"]["value"], "at_most": 5}

    rows = (out / "gradebook-masking.csv").read_text().splitlines()
    assert rows[0].startswith("submission,student_name,student_email,student_id,assignment,score")
    assert any(row.startswith("submission_1,Ada Lovelace,u1@uni.example,s100,masking,") for row in rows)
    assert len(rows) == 1 + len(NAMES)
    assert any(row.startswith("submission_3,Grace Hopper,") for row in rows) and "Mallory" not in "".join(rows)
    assert "Ignored: submission_metadata.json in your submission" in results["submission_3"].output

    html = (out / "report.html").read_text()
    for fragment in (mistaken.extra_data["mistake"], "submission_2", "does not load", "time ratio",
                     "submission_2</td><td>submission_4"):  # the renamed copy is paired with its source
        assert fragment in html.replace("&#34;", '"').replace("&#39;", "'")
    assert "https://" not in html and "<script" not in html  # nothing to fetch when it is viewed
    told = html.split('id="masking-not-graded"')[1].split("</section>")[0]  # what submission_4 was told, as it reads
    assert "submission_4" in told and "<pre><code>" in told and "```" not in told


def test_report_rewrites_from_the_results_folder_and_says_what_it_needs(batch, tmp_path, caplog):
    export, out, _ = batch
    copy = tmp_path / "results"
    shutil.copytree(out, copy)
    for written in ("report.html", "gradebook-masking.csv"):
        (copy / written).unlink()
    assert main(["report", str(copy)]) == 0
    assert "Not checked: pass the graded folders or zips" in (copy / "report.html").read_text()
    assert "Grace Hopper" in (copy / "gradebook-masking.csv").read_text(), "the names kept beside the results"
    assert main(["report", str(copy), "--submissions", str(export)]) == 0
    assert "submission_2</td><td>submission_4" in (copy / "report.html").read_text()
    assert "Grace Hopper" in (copy / "gradebook-masking.csv").read_text()
    for arguments, says in (([str(tmp_path / "nowhere")], "is not a folder"), ([str(tmp_path)], "holds no results"),
                            ([str(copy), "--submissions", str(copy)], "has results here; pass the same paths"),
                            ([str(copy), "--submissions", str(tmp_path / "nowhere")], "no submissions found under")):
        caplog.clear()
        assert main(["report", *arguments]) == 2
        assert says in caplog.text and len(caplog.records) == 1, caplog.text


def test_students_come_from_the_exports_metadata_never_from_a_submission(tmp_path):
    """The export's ``submission_metadata.yml`` names the students; a student's own metadata (a json in the folder,
    or a yml beside files they nested a folder down) does not, whatever it says."""
    export = tmp_path / "export"
    inner = export / "submission_5" / "inner"
    inner.mkdir(parents=True)
    (inner / "submission_metadata.json").write_text(json.dumps(FORGED))
    assert students(inner, given=export) == ()
    forged = {"inner": {":submitters": [{":name": "Mallory Forger"}]}}
    (export / "submission_5" / "submission_metadata.yml").write_text(yaml.safe_dump(forged))
    assert students(inner, given=export) == ()  # no export metadata: the student's own yml, below what was given
    assert discover([export])[0].given == export
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(
        {"submission_5": {":submitters": [{":name": "Ada Lovelace", ":email": "ada@uni.example", ":sid": "11"}]}}))
    ada = (Submitter("Ada Lovelace", "ada@uni.example", "11"),)
    assert students(inner, given=export) == students(export / "submission_5", given=None) == ada
    assert students(inner, given=inner) == ada  # one submission given: every folder above it is the grader's
    assert students(tmp_path / "elsewhere", given=None) == ()


def class_of_200(results: dict[str, Results], export: Path, into: Path) -> tuple[list[Results], dict[str, Path]]:
    """200 submissions' results and code, each a perturbed copy of one of the graded ones (see the module
    docstring): some tests flip, a named mistake may be dropped, figures scale, code gets a line of its own."""
    rng = random.Random(7)
    graded = sorted(results.values(), key=lambda r: r.submission)
    collected, sources = [], {}
    for index in range(200):
        base = graded[index % len(graded)]
        copy = Results.from_gradescope(json.loads(json.dumps(base.to_gradescope())))
        copy.submission = f"student-{index:03d}"
        for test in copy.tests:
            if test.max_score > 0 and rng.random() < 0.15:
                passed = test.status != "passed"
                test.status, test.score = ("passed", test.max_score) if passed else ("failed", 0.0)
                if passed:
                    test.extra_data.pop("mistake", None)
            for figure in test.extra_data.get("figures", {}).values():
                if figure["value"] is not None:
                    figure["value"] *= rng.uniform(0.6, 1.8)
        collected.append(copy)
        if index % 5 == 0:  # the similarity check is quadratic in the submissions: a fifth of them keep their code
            folder = into / copy.submission
            shutil.copytree(export / base.submission, folder)
            with open(folder / "masking.py", "a") as handle:
                handle.write(f"\nSTUDENT = {index}  # {rng.random()}\n")
            sources[copy.submission] = folder
    return collected, sources


def test_the_page_of_200_submissions_in_chromium(batch, tmp_path):
    from matplotlib.image import imread

    export, _, results = batch
    collected, sources = class_of_200(results, export, tmp_path / "class")
    out = tmp_path / "results"
    out.mkdir()
    written = page.write(out, collected, sources)

    with chromium() as driver:
        driver.get(written.as_uri())
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, errors
        images = driver.execute_script("return [...document.images].map(i => [i.alt, i.complete, i.naturalWidth, "
                                       "i.naturalHeight])")
        assert len(images) >= 4 and all(done and width > 0 and height > 0 for _, done, width, height in images), images
        height = driver.execute_script("return document.documentElement.scrollHeight")
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                                 "clip": {"x": 0, "y": 0, "width": 1200,
                                                                          "height": height, "scale": 1}})
        boxes = driver.execute_script("return Object.fromEntries([...document.querySelectorAll('section.part')]"
                                      ".map(s => { const r = s.getBoundingClientRect(); return [s.id, "
                                      "[r.left + scrollX, r.top + scrollY, r.width, r.height]]; }))")
        overview = driver.find_element("id", "overview").text
    png = base64.b64decode(shot["data"])
    (tmp_path / "report.png").write_bytes(png)
    pixels = imread(io.BytesIO(png))
    assert pixels.shape[0] == height and pixels.shape[1] == 1200
    assert "masking 200" in overview.replace("\n", " ")
    for section in SECTIONS:
        left, top, width, box_height = (round(v) for v in boxes[f"masking-{section}"])
        assert width > 0 and box_height > 0 and top + box_height <= height, (section, boxes[f"masking-{section}"])
        region = pixels[top:top + box_height, left:left + width]
        assert region.std() > 0.05, f"the {section} section is blank in the screenshot"
