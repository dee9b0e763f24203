"""What a submission's results say of it (``Status``), and how its files are written (``Results.write`` through
``scratch.replacing``): whole or not at all, read back as written."""

from __future__ import annotations

import json
import stat

import pytest

from autograder import scratch
from autograder.batch.engine import EngineError, grade_all
from autograder.results import STOPPED, Results, Status, TestResult


def _results() -> Results:
    return Results(assignment="masking", submission="ada", tests=[
        TestResult(name="causal_mask", number="1.1", score=1.0, max_score=2.0, status="failed", output="off by one")])


def test_a_status_is_written_as_users_read_it_and_read_back():
    results = _results()
    assert results.status is None and results.reason == ""
    results.set_status(Status.INCOMPLETE, STOPPED)
    assert results.extra_data["status"] == "incomplete: the grader was stopped"
    again = Results.from_gradescope(json.loads(json.dumps(results.to_gradescope())))
    assert again.status is Status.INCOMPLETE and again.reason == STOPPED
    results.set_status(Status.GRADED)
    assert results.extra_data["status"] == "graded" and results.status is Status.GRADED and results.reason == ""
    results.extra_data["status"] = "something else: written by an older grader"
    assert results.status is None


def test_only_not_graded_and_grader_failed_mean_no_grade():
    assert {status for status in Status if status.ungraded} == {Status.NOT_GRADED, Status.GRADER_FAILED}


def test_the_plugins_writes_leave_feedback_to_the_last_one(tmp_path):
    results = _results()
    results.write(tmp_path, final=False)
    assert json.loads((tmp_path / "results.json").read_text())["score"] == 1.0
    assert not (tmp_path / "feedback.md").exists()
    results.write(tmp_path)
    assert "**Score: 1 / 2**" in (tmp_path / "feedback.md").read_text()
    assert stat.S_IMODE((tmp_path / "results.json").stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["feedback.md", "results.json"], "no temporary file is left"


def test_a_write_that_fails_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "gradebook.csv"
    path.write_text("the old gradebook\n")
    with pytest.raises(RuntimeError), scratch.replacing(path) as temp:
        temp.write_text("half a new gra")
        raise RuntimeError("the writer died")
    assert path.read_text() == "the old gradebook\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gradebook.csv"], "the temporary file is removed"


def test_an_unknown_engine_is_refused_with_the_known_ones(tmp_path):
    with pytest.raises(EngineError, match="unknown engine 'slurm'; choose one of local, ray"):
        grade_all([], tmp_path, engine="slurm")
