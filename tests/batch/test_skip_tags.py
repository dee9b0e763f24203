"""Skipping costly tests by tag: `autograder grade --skip-tag`, batch jobs, and validate's mutants."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.submissions import REPO, reference_with

from autograder import cli
from autograder.authoring import validate
from autograder.batch import engine, gradebook
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.batch.jobs import grade_job
from autograder.grading_options import GradingOptions
from autograder.results import Results, TestResult
from autograder.sandbox.isolation import Isolation


def test_skipped_tests_are_listed_not_scored(tmp_path):
    """The public masking tests without those tagged masked_softmax (a batch-wide tag) or padding_mask (the job's)."""
    job = Job("cheap", reference_with(tmp_path, "masking"), "masking",
              options=GradingOptions(skip_tags=("padding_mask",)))
    [cheap] = grade_all([job], tmp_path / "out", GradingOptions(public_only=True, skip_tags=("masked_softmax",)),
                        progress=False)
    skipped = cheap.extra_data["skipped"]
    assert cheap.tests and len(skipped) >= 6, "the reference's other public tests ran; those tagged did not"
    assert not any({"masked_softmax", "padding_mask"} & set(t.tags) for t in cheap.tests)
    assert cheap.score == cheap.max_score == sum(t.max_score for t in cheap.tests), "skipped tests carry no points"
    numbers = sorted([t.number for t in cheap.tests] + [s["number"] for s in skipped],
                     key=lambda n: tuple(map(int, n.split("."))))
    by_file = {}
    for number in numbers:
        by_file.setdefault(number.split(".")[0], []).append(int(number.split(".")[1]))
    assert all(found == list(range(1, len(found) + 1)) for found in by_file.values()), \
        f"tests keep the numbers of a full run: {numbers}"
    assert "Not run" in cheap.output and "masked_softmax, padding_mask" in cheap.output
    assert all(f"{s['number']} {s['name']}" in cheap.output for s in skipped)
    assert "grader itself failed" not in cheap.output


def test_cli_passes_every_skip_tag_to_every_job(tmp_path, monkeypatch):
    seen = {}

    def fake_grade_all(jobs, out, options, **where):
        seen.update(where, options=options, jobs=jobs)
        return []

    monkeypatch.setattr(engine, "grade_all", fake_grade_all)
    monkeypatch.setattr(gradebook, "print_summary", lambda collected: None)
    assert cli.main(["grade", str(REPO / "solutions" / "masking"), "--out", str(tmp_path), "--skip-tag", "retraining",
                     "--skip-tag", "runtime", "--quiet"]) == 0
    assert seen["options"] == GradingOptions(skip_tags=("retraining", "runtime")) and len(seen["jobs"]) == 1


def _results(name: str, cells: list[tuple[float, float] | None]) -> Results:
    """A result per cell (score, max_score); ``None`` for a test that was skipped."""
    tests = [TestResult(name=f"t{i}", number=f"1.{i}", score=c[0], max_score=c[1],
                        status="passed" if c[0] >= c[1] else "failed") for i, c in enumerate(cells) if c is not None]
    skipped = [{"number": f"1.{i}", "name": f"t{i}", "max_score": 5.0} for i, c in enumerate(cells) if c is None]
    return Results(assignment="lm", submission=name, tests=tests, extra_data={"skipped": skipped} if skipped else {})


def test_validate_judges_mutants_without_retraining_and_shows_dashes():
    reference, skeleton = _results("reference", [(1, 1), (5, 5)]), _results("skeleton", [(0, 1), (0, 5)])
    cheap_catch, only_retraining = _results("mutant-a", [(0, 1), None]), _results("mutant-b", [(1, 1), None])
    problems = validate._judge([reference, skeleton, cheap_catch, only_retraining], [reference, skeleton])
    assert problems == ["mutant-b loses no points: add a test that catches it"], \
        "a mutant that only the skipped retraining test would catch counts as not caught"
    rows = {line.split()[0]: line.split()[2:] for line in validate._matrix("lm", [reference, skeleton, cheap_catch])
            .splitlines()[2:5]}
    assert rows == {"reference": [".", "."], "skeleton": ["x", "x"], "mutant-a": ["x", "-"]}


@pytest.fixture
def validated_jobs(tmp_path, monkeypatch) -> list[Job]:
    """The jobs ``validate masking`` grades, with gradings faked: the reference and the correct alternatives pass,
    everything else fails."""
    graded = []

    def fake_grade_all(jobs, out, options, **where):
        graded.extend(dataclasses.replace(job, options=job.options.over(options)) for job in jobs)
        return [_results(job.name, [(1, 1) if job.name.endswith("/reference") or "/alternative-" in job.name
                                  else (0, 1)]) for job in jobs]

    monkeypatch.setattr(validate, "grade_all", fake_grade_all)
    monkeypatch.setattr(validate, "_unnamed", lambda graded, catalogue: [])  # these results name no mistake
    assert validate.validate(["masking"], tmp_path, workers=1)
    return graded


def test_validate_skips_retraining_for_mutants_only_and_runtime_for_all_but_slow_ones(validated_jobs):
    subjects = {job.name.removeprefix("masking/graded/"): job.options.skip_tags for job in validated_jobs
                if job.name.startswith("masking/graded/") and "/alternative-" not in job.name}
    assert subjects.pop("reference") == subjects.pop("skeleton") == ()
    assert "retraining" in validate.MUTANT_SKIP_TAGS
    for slow in ("mutant-attention_python_loops", "mutant-broadcast_instead_of_matmul"):
        assert subjects.pop(slow) == validate.MUTANT_SKIP_TAGS, "marked slow: graded with the runtime tests"
    assert subjects and set(subjects.values()) == {(*validate.MUTANT_SKIP_TAGS, "runtime")}


def test_validate_draws_the_hidden_tests_again_under_fresh_secrets(validated_jobs):
    fresh = [job for job in validated_jobs if job.options.secret is not None]
    graded = [job for job in validated_jobs if job.name.startswith("masking/graded/")]
    assert {job.options.secret for job in fresh} == {"validate-fresh-1", "validate-fresh-2"} \
        == set(validate.fresh_secrets(2))
    assert len(fresh) == validate.FRESH_SECRETS * len(graded)
    assert all(job.options.hidden_only and {"runtime", "retraining"} <= set(job.options.skip_tags) for job in fresh)
    assert all(job.options.oracle == "verdicts" and job.name.startswith("masking/fresh-") for job in fresh)


def test_validate_grades_under_as_many_fresh_secrets_as_asked(tmp_path, monkeypatch):
    """`make test` asks for one fresh secret (CI's time budget): one grading of each subject's hidden tests, under
    validate-fresh-1; the command line passes --fresh-secrets through."""
    graded = []
    monkeypatch.setattr(validate, "grade_all", lambda jobs, out, options, **where: graded.extend(jobs) or
                        [_results(job.name, [(1, 1) if job.name.endswith("/reference") or "/alternative-" in job.name
                                             else (0, 1)]) for job in jobs])
    monkeypatch.setattr(validate, "_unnamed", lambda graded, catalogue: [])
    assert validate.validate(["masking"], tmp_path, workers=1, fresh=1)
    assert {job.options.secret for job in graded if job.options.secret is not None} == {"validate-fresh-1"}
    seen = {}
    monkeypatch.setattr(validate, "validate", lambda names, out, jobs, **options: seen.update(options) or True)
    assert cli.main(["validate", "masking", "--fresh-secrets", "1", "--out", str(tmp_path / "cli")]) == 0
    assert seen["fresh"] == 1


def test_validate_replays_the_reference_and_skeleton_with_the_public_tests(validated_jobs):
    replayed = [job for job in validated_jobs if "/replayed/" in job.name]
    assert [job.name for job in replayed] == ["masking/replayed/reference", "masking/replayed/skeleton"]
    assert all(job.options.public_only and job.options.oracle == "replay" and job.options.secret is None
               for job in replayed)


def test_a_jobs_own_oracle_and_public_only_win_over_the_batchs(tmp_path):
    """What the runner is asked (its job on stdin): the job's own choices, else the batch's."""
    asked = []

    class Runners:
        stopping = False
        isolation = Isolation("namespaces")

        def start(self, spec, log):
            asked.append(spec)
            return type("Done", (), {"pid": 0, "returncode": 0, "wait": lambda self, timeout=None: 0})()

        def finish(self, process):
            pass

    source = REPO / "solutions" / "masking"
    for job in (Job("own", source, "masking", options=GradingOptions(public_only=True, oracle="replay")),
                Job("batch's", source, "masking")):
        grade_job(job, tmp_path / job.name, GradingOptions(oracle="verdicts"), runners=Runners())
    assert [(spec["options"]["public_only"], spec["options"]["oracle"]) for spec in asked] == [(True, "replay"),
                                                                                              (False, "verdicts")]


def test_grading_options_are_one_record_from_the_batch_to_the_runner():
    """A job's own options over the batch's (``GradingOptions.over``), sent to the runner as JSON and read back into
    the same record; a job that sets nothing is graded with the batch's options exactly."""
    batch = GradingOptions(public_only=True, skip_tags=("runtime",), oracle="live", secret="term")
    own = GradingOptions(hidden_only=True, skip_tags=("retraining", "runtime"), oracle="verdicts")
    merged = own.over(batch)
    assert merged == GradingOptions(public_only=True, hidden_only=True, skip_tags=("runtime", "retraining"),
                                    oracle="verdicts", secret="term")
    assert GradingOptions().over(batch) == batch
    assert GradingOptions(secret="fresh").over(batch).secret == "fresh"
    assert GradingOptions.from_json(json.loads(json.dumps(merged.to_json()))) == merged
    for wrong in ({"public_only": True, "skip": []}, {"skip_tags": "runtime"}, ["public_only"]):
        with pytest.raises(ValueError):
            GradingOptions.from_json(wrong)


def test_validate_retrains_the_alternatives_marked_so_unless_told_not_to(tmp_path):
    """lm's alternatives marked '# retraining' are graded with their retraining by default; make test's
    ``--no-retrain-alternatives`` grades them without it, as every other alternative."""
    from autograder import course
    from autograder.authoring import alternatives

    lm = course.load("lm")
    others = alternatives.catalog(lm)
    marked = {f"alternative-{other.name}" for other in others if other.retraining}
    assert marked, "lm's trainers are marked '# retraining'"
    for retrain in (True, False):
        jobs = validate._jobs(lm, [], others, tmp_path / str(retrain), retrain)
        skipped = {job.name: job.options.skip_tags for job in jobs if job.name.startswith("alternative-")}
        assert {name for name, tags in skipped.items() if "retraining" not in tags} == (marked if retrain else set())
