"""Instructors' batches as they come: Gradescope's export zip as downloaded, a batch stopped and resumed, and one
results folder with one gradebook.

Gradings are cheap: submissions that do not load (a syntax error: no test runs), and the reference with the runtime
test skipped. The stop is deterministic: the batch is sent SIGINT once the second submission's runner has listed its
tests, so that one submission is graded, one stopped and one not started.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import re
import resource
import shutil
import signal
import threading
import time
import unicodedata
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from support.submissions import MASKING, REPO

from autograder import cli, gradescope_metadata
from autograder.batch import discovery, resume
from autograder.batch import folder as results_folder
from autograder.batch.discovery import Job, discovered, export_prefix
from autograder.batch.engine import grade_all
from autograder.gradescope_metadata import Submitter, students
from autograder.results import STOPPED, Results, Status, TestResult

BROKEN = (REPO / "examples" / "masking" / "syntax_error" / "masking.py").read_text()
SKIP = ["--skip-tag", "runtime", "--quiet"]
SUBMITTERS = {"submission_11": [("Ada Lovelace", "s100", "ada@uni.example")],
              "submission_12": [("Pair One", "s200", "one@uni.example"), ("Pair Two", "s201", "two@uni.example")]}


def broken(folder: Path, mark: str) -> Path:
    """A masking submission that does not load (nothing runs: cheap), its content told apart by ``mark``."""
    folder.mkdir(parents=True)
    (folder / "masking.py").write_text(f"{BROKEN}\n# {mark}\n")
    return folder


def export_zip(path: Path, top: str = "assignment_555_export/") -> Path:
    """Gradescope's "Export Submissions" zip: ``submission_<id>/`` folders and the metadata, in one top folder."""
    metadata = {name: {":submitters": [{":name": n, ":sid": sid, ":email": email} for n, sid, email in people],
                       ":created_at": "2026-11-01 10:00:00.000000000 -07:00", ":score": 0.0}
                for name, people in SUBMITTERS.items()}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{top}submission_metadata.yml", yaml.safe_dump(metadata))
        archive.writestr(f"__MACOSX/{top}._submission_metadata.yml", "junk")
        for name in SUBMITTERS:
            archive.writestr(f"{top}{name}/masking.py", f"{BROKEN}\n# {name}\n")
    return path


def rows(path: Path, without: tuple[str, ...] = ()) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in row.items() if k not in without} for row in csv.DictReader(handle)]


def test_an_export_reads_as_one_and_anything_else_does_not():
    """The layouts: at its top or in its one top folder (junk beside it), and what is not an export."""
    assert export_prefix([("submission_metadata.yml",), ("submission_1", "masking.py")]) == ()
    assert export_prefix([("e", "submission_metadata.yml"), ("e", "submission_1", "masking.py")]) == ("e",)
    assert export_prefix([("submission_1", "masking.py"), ("submission_2", "masking.py")]) is None  # no metadata
    assert export_prefix([("submission_metadata.yml",), ("masking.py",)]) is None  # one student's, with a yml
    assert export_prefix([("a", "submission_metadata.yml"), ("b", "submission_1", "masking.py")]) is None


def test_an_export_zip_is_unpacked_into_the_commands_folder_and_named_by_its_metadata(tmp_path):
    given = export_zip(tmp_path / "assignment_555_export.zip")
    with discovered([given]) as jobs:
        assert [job.name for job in jobs] == list(SUBMITTERS) and all(not job.problem for job in jobs)
        assert {job.assignment for job in jobs} == {"masking"}
        unpacked = jobs[0].given
        assert unpacked.name == "assignment_555_export" and not unpacked.is_relative_to(tmp_path)
        assert students(jobs[1].source, given=jobs[1].given) == tuple(
            Submitter(name, email, sid) for name, sid, email in SUBMITTERS["submission_12"])
    assert not unpacked.exists(), "the unpacked export outlives the command"
    with zipfile.ZipFile(given) as archive:  # unzipped, the same export gives the same jobs
        archive.extractall(tmp_path / "unzipped")
    with discovered([tmp_path / "unzipped" / "assignment_555_export"]) as jobs:
        assert [job.name for job in jobs] == list(SUBMITTERS)


def test_a_zip_that_reads_neither_as_one_submission_nor_as_an_export_is_refused(tmp_path, monkeypatch):
    several = tmp_path / "several.zip"
    with zipfile.ZipFile(several, "w") as archive:
        for name in ("alice", "bob"):
            archive.writestr(f"class/{name}/masking.py", BROKEN)
    nested = tmp_path / "downloads"
    nested.mkdir()
    export_zip(nested / "assignment_555_export.zip")
    hostile = tmp_path / "hostile.zip"
    with zipfile.ZipFile(hostile, "w") as archive:
        archive.writestr("submission_metadata.yml", "{}")
        archive.writestr("submission_1/masking.py", BROKEN)
        archive.writestr("../outside.py", "escaped")
    one = tmp_path / "one.zip"  # a student's copy nested in a folder of the submission is still one submission
    with zipfile.ZipFile(one, "w") as archive:
        archive.writestr("masking.py", BROKEN)
        archive.writestr("old/masking.py", BROKEN)
    with discovered([several, nested, hostile, one]) as jobs:
        problems = {job.name: job.problem for job in jobs}
    assert "holds the files of 2 submissions (class/alice/, class/bob/)" in problems["several"]
    assert "reads neither as one submission nor as a Gradescope export" in problems["several"]
    assert "is a Gradescope export" in problems["assignment_555_export"], "a zip in a folder is one student's"
    assert "cannot be unpacked" in problems["hostile"] and "unsafe entry" in problems["hostile"]
    assert not (tmp_path / "outside.py").exists()
    assert problems["one"] == ""
    monkeypatch.setattr(discovery, "EXPORT_FILES", 3)  # bounded like every zip
    with discovered([export_zip(tmp_path / "big.zip")]) as jobs:
        assert len(jobs) == 1 and "entries (limit 3)" in jobs[0].problem


def test_resume_keeps_final_grades_by_content_and_grades_the_rest(tmp_path):
    """A final grade is kept for the submission of its own name whose staged files are the same (a zip of the same
    files too); under another name, the same files get a result of their own with that verdict, never the other's
    result (the grade stays with the student it was graded for); anything else is graded."""
    first, second = broken(tmp_path / "first", "1"), broken(tmp_path / "second", "2")
    zipped = tmp_path / "zipped.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.write(first / "masking.py", "inner/masking.py")
    jobs = discovery.discover([first, second, zipped])
    digests = [resume.content(job, tmp_path / f"stage{index}") for index, job in enumerate(jobs)]
    assert digests[0] == digests[2] != digests[1] and digests[0].startswith("sha256:")
    assert resume.content(jobs[0], tmp_path / "again") == digests[0], "the same files, the same digest"

    def earlier(name: str, content: str, status: Status) -> Results:
        results = Results(assignment="masking", submission=name, extra_data={"content": content})
        results.set_status(status, STOPPED if status is Status.INCOMPLETE else "")
        return results

    old_first = earlier("old_first", digests[0], Status.DOES_NOT_LOAD)
    plan = resume.plan(jobs, [old_first, earlier("second", digests[1], Status.INCOMPLETE),
                              earlier("gone", "sha256:0", Status.GRADED)])
    assert [job.name for job in plan.todo] == ["second"], "a grading that did not finish is graded again"
    assert plan.kept == [] and plan.copied == {"first": old_first, "zipped": old_first}, "a verdict, not a result"
    alike = resume.plan(jobs, [earlier(name, digests[0], Status.GRADED) for name in ("zipped", "first")])
    assert alike.kept == ["first", "zipped"], "two students who handed in alike keep a grade each"
    assert [job.name for job in alike.todo] == ["second"] and not alike.copied
    changed = resume.plan(jobs, [earlier("first", "sha256:1", Status.GRADED)])
    assert [job.name for job in changed.todo] == ["first", "second", "zipped"], "changed files are graded again"


def test_resume_never_gives_one_students_grade_to_another(tmp_path, caplog):
    """Issue 41: an export holding Mallory's copy of Alice's files (and not Alice), resumed over Alice's grade, renamed
    Alice's result to Mallory: Alice's row was gone, Mallory's was Alice's grade. Each keeps a row of their own."""
    first, second = tmp_path / "first", tmp_path / "second"
    for export, folder, name in ((first, "submission_1", "Alice Honest"), (second, "submission_2", "Mallory Copier")):
        broken(export / folder, "Alice's files")
        (export / "submission_metadata.yml").write_text(yaml.safe_dump({folder: {":submitters": [{":name": name}]}}))
    out = tmp_path / "out"
    assert cli.main(["grade", str(first), "--out", str(out), *SKIP]) == 0
    alice = (out / "submission_1" / "results.json").read_bytes()
    caplog.set_level(logging.INFO)
    assert cli.main(["grade", str(second), "--resume", str(out), *SKIP]) == 0
    assert "1 the files of another's (its verdict copied as theirs); grading 0" in caplog.text
    named = {row["submission"]: row for row in rows(out / "gradebook-masking.csv")}
    assert {name: row["student_name"] for name, row in named.items()} == {"submission_1": "Alice Honest",
                                                                          "submission_2": "Mallory Copier"}
    assert named["submission_2"]["status"] == named["submission_1"]["status"] == "does not load"
    assert (out / "submission_1" / "results.json").read_bytes() == alice, "Alice's result is hers, untouched"
    copied = json.loads((out / "submission_2" / "results.json").read_text())
    assert copied["extra_data"]["submission"] == "submission_2" and "submission_1" not in (
        out / "submission_2" / "feedback.md").read_text(), "Mallory's feedback names no one else"


@pytest.mark.slow
def test_an_export_zip_gives_one_row_per_submission_and_its_folder_one_gradebook(tmp_path, caplog):
    """The export as downloaded: a row per submission with its students (a group's joined), beside a zip refused
    with the reason. Then, into the same folder: one submission again is refused, naming the others, and with
    --force every gradebook lists them all, as `autograder report` writes them again."""
    given = export_zip(tmp_path / "assignment_555_export.zip")
    several = tmp_path / "several.zip"
    with zipfile.ZipFile(several, "w") as archive:
        for name in ("alice", "bob"):
            archive.writestr(f"{name}/masking.py", BROKEN)
    out = tmp_path / "out"
    assert cli.main(["grade", str(given), str(several), "--out", str(out), *SKIP]) == 1
    named = {row["submission"]: row for row in rows(out / "gradebook-masking.csv")}
    assert set(named) == {*SUBMITTERS, "several"}
    assert named["submission_12"]["student_name"] == "Pair One; Pair Two"
    assert named["submission_12"]["student_id"] == "s200; s201"
    assert named["submission_11"]["student_email"] == "ada@uni.example"
    assert named["submission_11"]["status"] == "does not load" and named["submission_11"]["score"] == "0.0"
    assert named["several"]["status"] == "not graded" and named["several"]["score"] == ""
    assert "not graded: several: several.zip holds the files of 2 submissions" in caplog.text

    again = broken(tmp_path / "again" / "submission_11", "submission_11")  # as the export holds it
    before = (out / "gradebook.csv").read_text()
    caplog.clear()
    assert cli.main(["grade", str(again), "--out", str(out), *SKIP]) == 2
    assert f"{out} holds the results of 2 other submission(s) (several, submission_12)" in caplog.text
    assert (out / "gradebook.csv").read_text() == before, "a refusal writes nothing"
    assert cli.main(["grade", str(again), "--out", str(out), "--force", *SKIP]) == 0
    timing = ("execution_time",)
    graded = rows(out / "gradebook.csv", timing)
    assert [row["submission"] for row in graded] == ["several", "submission_11", "submission_12"]
    assert [row["student_name"] for row in rows(out / "gradebook-masking.csv")] == ["", "", "Pair One; Pair Two"], \
        "the names kept beside the results; the one graded again from a folder without metadata has none"
    assert cli.main(["report", str(out)]) == 0
    assert [row["student_name"] for row in rows(out / "gradebook-masking.csv")] == ["", "", "Pair One; Pair Two"]
    assert cli.main(["report", str(out), "--submissions", str(given), str(several)]) == 0
    assert rows(out / "gradebook.csv", timing) == graded
    assert [row["student_name"] for row in rows(out / "gradebook-masking.csv")] == ["", "Ada Lovelace",
                                                                                  "Pair One; Pair Two"]


def stop_once_listed(monkeypatch, name: str) -> None:
    """SIGINT to this process (the command's) once the runner of submission ``name`` has listed its tests."""
    from autograder.batch import local

    grade_job = local.grade_job

    def graded_until_stopped(job, out_dir, options, **where):
        if job.name == name:
            def stop():
                while not (out_dir / "results.json").is_file():
                    time.sleep(0.02)
                os.kill(os.getpid(), signal.SIGINT)

            threading.Thread(target=stop, daemon=True).start()
        return grade_job(job, out_dir, options, **where)

    monkeypatch.setattr(local, "grade_job", graded_until_stopped)


@pytest.mark.slow
def test_a_stopped_batch_resumed_gives_the_gradebook_of_one_never_stopped(tmp_path, monkeypatch, caplog):
    submissions = tmp_path / "submissions"
    broken(submissions / "a_broken", "a")
    shutil.copytree(MASKING.solution_dir, submissions / "b_reference", symlinks=False)
    broken(submissions / "c_broken", "c")
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    assert cli.main(["grade", str(submissions), "--out", str(whole), *SKIP]) == 0

    with monkeypatch.context() as patched:
        stop_once_listed(patched, "b_reference")
        assert cli.main(["grade", str(submissions), "--out", str(resumed), *SKIP]) == 130
    assert "holds 1 does not load, 1 stopped, and 1 submission(s) were not started" in caplog.text
    assert f"--resume {resumed}` grades the rest" in caplog.text
    stopped = {row["submission"]: row for row in rows(resumed / "gradebook.csv")}
    assert set(stopped) == {"a_broken", "b_reference"}
    assert stopped["b_reference"]["status"] == "stopped"
    assert stopped["b_reference"]["score"] == stopped["b_reference"]["percent"] == "", "no number reads as a grade"
    results = json.loads((resumed / "b_reference" / "results.json").read_text())
    pending = [f"masking:{t['number']} {t['name']}" for t in results["tests"] if t["extra_data"].get("pending")]
    assert pending and all(stopped["b_reference"][column] == "" for column in pending)
    summary = (resumed / "summary.md").read_text()
    assert "| b_reference | masking | - / 57 |" in summary and "| stopped |" in summary
    assert "Not started, the grading having stopped: c_broken." in summary
    assert "1 does not load, 1 stopped." in summary
    html = (resumed / "report.html").read_text()
    listed = html.split('id="masking-not-graded"')[1].split("</section>")[0]
    assert '<td>b_reference</td><td class="bad">stopped</td>' in listed, "the report says it stopped"
    assert "1 does not load, 1 stopped; over the final grades, mean 0.0 %" in html, "no score of it is counted"

    first = (resumed / "a_broken" / "results.json").read_bytes()
    caplog.clear()
    caplog.set_level(logging.INFO)
    assert cli.main(["grade", str(submissions), "--resume", str(resumed), *SKIP]) == 0
    assert "of 3 submission(s), 1 have a final grade there; grading 2" in caplog.text
    assert (resumed / "a_broken" / "results.json").read_bytes() == first, "a final grade is graded again"
    timing = ("execution_time",)
    assert rows(resumed / "gradebook.csv", timing) == rows(whole / "gradebook.csv", timing)
    assert rows(resumed / "gradebook-masking.csv", timing) == rows(whole / "gradebook-masking.csv", timing)
    listed = (resumed / "report.html").read_text().split('id="masking-not-graded"')[1].split("</section>")[0]
    assert "b_reference" not in listed and "a_broken" in listed

    (submissions / "a_broken").rename(submissions / "a_renamed")  # the same files under another name: a row of its own
    assert cli.main(["grade", str(submissions), "--resume", str(resumed), *SKIP]) == 0
    assert "1 the files of another's (its verdict copied as theirs); grading 0" in caplog.text
    renamed = {row.pop("submission"): row for row in rows(resumed / "gradebook.csv", timing)}
    assert set(renamed) == {"a_broken", "a_renamed", "b_reference", "c_broken"}
    assert renamed["a_renamed"] == renamed["a_broken"] and (resumed / "a_broken" / "results.json").read_bytes() == first


NAMES = ["gradebook.csv", "summary.md", "report.html", "manual_answers.csv", "gradebook-masking.csv", "Alice", "alice",
         "ALICE", "caf\u00e9", "cafe\u0301", "\uff43\uff41\uff46\u00e9", "a:b", "a?b", "a_b", "a_b-2", "..", ".", "",
         "\x1b]0;title\x07", "x" * 300, "\u00e9" * 200]


def test_a_submissions_name_never_decides_where_the_batchs_files_go():
    """Issue 41: `gradebook.csv.zip` was graded into out/gradebook.csv/, where the gradebook could then not be
    written; two names that differ by case or Unicode form are one folder on some file systems. A results folder's
    name has no extension, as every batch file has, and no two are one to a file system."""
    taken: set[str] = set()
    names = [discovery.folder_name(name, taken) for name in NAMES]
    assert all(re.fullmatch(r"[\w-]+", name) and len(name.encode()) <= discovery.NAME_BYTES for name in names), names
    keys = [unicodedata.normalize("NFKC", name).casefold() for name in names]
    assert len(set(keys)) == len(keys), names
    assert names[:8] == ["gradebook_csv", "summary_md", "report_html", "manual_answers_csv", "gradebook-masking_csv",
                         "Alice", "alice-2", "ALICE-3"]


def test_zips_and_folders_named_like_batch_files_leave_the_batchs_files_to_it(tmp_path):
    submissions = tmp_path / "submissions"
    for name in ("gradebook.csv", "Summary.MD"):
        broken(tmp_path / "parts" / name, name)
        shutil.make_archive(str(submissions / name), "zip", tmp_path / "parts" / name)
    broken(submissions / "report.html", "report")
    out = tmp_path / "out"
    assert cli.main(["grade", str(submissions), "--out", str(out), *SKIP]) == 0
    assert {row["submission"] for row in rows(out / "gradebook.csv")} == {"gradebook_csv", "Summary_MD", "report_html"}
    for entry in out.iterdir():  # the batch's files all have an extension, a submission's folder never
        assert entry.is_file() == ("." in entry.name) and entry.is_dir() == (entry / "results.json").is_file(), entry


def test_one_students_folder_in_an_export_is_one_submission(tmp_path):
    """Issue 41: submission_7001/v1/ and v2/ in an export folder were two gradebook rows for one student (the zip of
    the same layout was refused): it is one submission, refused with the reason; one nested in a folder is graded."""
    export = tmp_path / "export"
    for folder in ("submission_7001/v1", "submission_7001/v2", "submission_7002/my work"):
        broken(export / folder, folder)
    (export / "submission_metadata.yml").write_text(yaml.safe_dump({"submission_7001": {":submitters": [
        {":name": "Alice Honest"}]}, "submission_7002": {":submitters": [{":name": "Bob Plain"}]}}))
    jobs = {job.name: job for job in discovery.discover([export])}
    assert set(jobs) == {"submission_7001", "submission_7002"}
    assert "submission_7001 holds the files of 2 submissions (v1/, v2/): it is one student's folder" in \
        jobs["submission_7001"].problem
    assert jobs["submission_7002"].problem == "" and jobs["submission_7002"].assignment == "masking"
    assert students(jobs["submission_7001"].source, given=export) == (Submitter("Alice Honest"),)


BOMB = "\n".join(['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'] + [
    f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 9)}]" for level in range(1, 10)]
    + ["submission_1:", "  :submitters:", "  - :name: *a9", "    :sid: '1'"])


@pytest.mark.parametrize(("text", "why"), [
    (BOMB, "its aliases expand it past 32 MB"),
    ("submission_1: " + "[" * 40 + "]" * 40, "nested more than 32 levels deep"),
    ("submission_1: [" + "1, " * 1001 + "]", "holds more than 1000 values"),
    ("submission_1: x\n" + "#" * 5000, "larger than 0 MB"),
    ("submission_1: [unclosed", "expected ',' or ']'"),
    ("- a list, not the export's mapping", "not a mapping of submissions"),
    (b"submission_1: \xff", "can't decode byte 0xff"),
])
def test_export_metadata_past_its_bounds_costs_the_export_its_names_never_the_batch(tmp_path, monkeypatch, caplog,
                                                                                    text, why):
    """Issue 41: an alias bomb in submission_metadata.yml ended `grade` with MemoryError at 2.8 GB, after every
    grading and before the gradebooks (`str` of the name expanded a billion strings). Bounded as it is parsed: the
    export names no one, said once, and the grades stand."""
    monkeypatch.setattr(gradescope_metadata, "METADATA_NODES", 1000)
    if "#" in str(text):
        monkeypatch.setattr(gradescope_metadata, "METADATA_BYTES", 4096)
    export = tmp_path / "export"
    source = broken(export / "submission_1", "1")
    (export / "submission_metadata.yml").write_bytes(text if isinstance(text, bytes) else text.encode())
    gradescope_metadata.export_metadata.cache_clear()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert students(source, given=export) == students(source, given=export) == ()
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 50 << 10, "kB: the bomb was expanded"
    warned = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warned) == 1 and why in warned[0] and "the gradebooks name no student" in warned[0], warned


def test_export_metadata_within_its_bounds_names_students_with_its_aliases(tmp_path):
    """What Ruby's YAML writes for an object met twice (an anchor, then aliases) is read as written; a name that is
    not text names no one."""
    export = tmp_path / "export"
    sources = [broken(export / f"submission_{number}", str(number)) for number in (1, 2)]
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters: &pair\n  - :name: Pair One\n    :sid: 7\n  - :name: [not, a, name]\n"
        "submission_2:\n  :submitters: *pair\n")
    gradescope_metadata.export_metadata.cache_clear()
    for source in sources:
        assert students(source, given=export) == (Submitter("Pair One", "", "7"), Submitter())


def test_an_engine_writes_only_each_submissions_folder(tmp_path):
    """The engine returns results and writes each submission's folder; the folder's own files are written once, by
    its owner (``folder.write``), from every result in it."""
    out = tmp_path / "out"
    [results] = grade_all([Job("refused", tmp_path / "nowhere", None, problem="not a submission")], out,
                          progress=False)
    assert results.status is Status.NOT_GRADED
    assert [path.name for path in out.iterdir()] == ["refused"]
    assert [r.submission for r in results_folder.write(out)] == ["refused"]
    assert {"gradebook.csv", "summary.md"} <= {path.name for path in out.iterdir()}


def test_the_ray_driver_writes_a_tasks_results_through_results_write(tmp_path):
    """What a Ray task returns is data: its results.json is read and written again by ``Results.write`` (whole, with
    its feedback), never copied as bytes."""
    from autograder.batch import ray as on_ray

    sent = Results(assignment="masking", submission="s", tests=[TestResult(name="t", number="1.1", score=1,
                                                                           max_score=2, status="failed")])
    files = {"results.json": json.dumps(sent.to_gradescope()).encode(), "runner.log": b"ran\n"}
    cluster = SimpleNamespace(get=lambda reference: files, exceptions=SimpleNamespace(RayError=RuntimeError))
    got = on_ray._collect(cluster, None, Job("s", tmp_path, "masking"), tmp_path / "out")
    got.write(tmp_path / "again")
    for name in ("results.json", "feedback.md"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    assert (tmp_path / "out" / "results.json").read_bytes() != files["results.json"]
    assert (tmp_path / "out" / "runner.log").read_bytes() == b"ran\n" and got.score == 1
