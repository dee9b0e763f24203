"""The one owner of a results folder (``autograder.batch.folder``): its gradebooks, summary and class report written
once per grading, from every result the folder holds, the report by the writer the command passes in; and what
``--force`` and ``--resume`` may do to a folder that holds results already.

Gradings are cheap: masking submissions that do not load (a syntax error: no test runs).
"""

from __future__ import annotations

import logging

import yaml
from support.submissions import reference_with

from autograder import cli
from autograder.batch import folder
from autograder.batch.discovery import Job
from autograder.report import page
from autograder.results import Results, Status

SKIP = ["--skip-tag", "runtime", "--quiet"]


def test_the_report_is_written_once_after_the_gradebooks_from_every_result(tmp_path):
    """The writer passed in is called once, after the gradebooks (which name the students of the jobs given now),
    with every result in the folder, graded now or before, and the code of the jobs given now; never for a folder
    without results."""
    out = tmp_path / "out"
    for name in ("earlier", "now"):
        results = Results(assignment="masking", submission=name)
        results.set_status(Status.DOES_NOT_LOAD, "SyntaxError: invalid syntax")
        results.write(out / name)
    export = tmp_path / "export"
    (export / "submission_7").mkdir(parents=True)
    (export / "submission_metadata.yml").write_text(
        yaml.safe_dump({"submission_7": {":submitters": [{":name": "Ada Lovelace"}]}}))
    calls = []

    def report(where, collected, sources):
        calls.append((where, [r.submission for r in collected], sources,
                      (where / "gradebook-masking.csv").read_text(), (where / "summary.md").is_file()))
        return where / "report.html"

    written = folder.write(out, [Job("now", export / "submission_7", "masking")], report=report)
    assert [r.submission for r in written] == ["earlier", "now"]
    [(where, names, sources, gradebook, summary)] = calls
    assert where == out and names == ["earlier", "now"] and sources == {"now": export / "submission_7"}
    assert "Ada Lovelace" in gradebook and summary, "the gradebooks and summary come first"
    assert folder.write(tmp_path / "empty", report=report) == [] and len(calls) == 1, "no results, no report"


def test_each_grading_writes_the_report_once_and_force_and_resume_keep_their_rules(tmp_path, monkeypatch, caplog):
    """``grade``, ``grade --force``, ``grade --resume`` and ``report`` each write report.html once, with every result
    in the folder; a grading refused (a folder holding other submissions' results, without --force) writes nothing."""
    writes = []
    original = page.write

    def counted(out, collected, *rest, **options):
        writes.append(sorted(r.submission for r in collected))
        return original(out, collected, *rest, **options)

    monkeypatch.setattr(page, "write", counted)
    given = tmp_path / "given"
    first, second = (reference_with(given, name, replace="def masked_softmax(:\n") for name in ("first", "second"))
    out = tmp_path / "out"
    assert cli.main(["grade", str(first), "--out", str(out), *SKIP]) == 0
    assert writes == [["first"]] and "first" in (out / "report.html").read_text()
    page_before = (out / "report.html").read_bytes()

    assert cli.main(["grade", str(second), "--out", str(out), *SKIP]) == 2
    assert writes == [["first"]] and (out / "report.html").read_bytes() == page_before, "a refusal writes nothing"
    assert cli.main(["grade", str(second), "--out", str(out), "--force", *SKIP]) == 0
    assert writes[1:] == [["first", "second"]] and "second" in (out / "report.html").read_text()

    caplog.set_level(logging.INFO)
    assert cli.main(["grade", str(first), str(second), "--resume", str(out), *SKIP]) == 0
    assert "of 2 submission(s), 2 have a final grade there; grading 0" in caplog.text
    assert cli.main(["report", str(out)]) == 0
    assert writes[2:] == [["first", "second"]] * 2
