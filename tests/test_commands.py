"""The commands as their users run them: grade (the demo), check (a student without solutions), validate."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import textwrap

from conftest import MASKING, REPO, find_test, reference_with

from autograder import cli
from autograder.results import Results, TestResult
from autograder.validate import _judge, _unnamed

GRADESCOPE_TEST_KEYS = {"name", "number", "score", "max_score", "status", "output", "visibility", "tags",
                        "extra_data"}


def test_demo_grades_every_bundled_masking_example(tmp_path):
    """What `make demo` does, for the masking examples (each assignment's tests grade its own examples)."""
    assert cli.main(["grade", str(REPO / "examples" / "masking"), "--out", str(tmp_path / "masking"), "--jobs", "2",
                     "--quiet"]) == 0
    tmp_path = tmp_path / "masking"
    rows = {f"masking-{row['submission']}": row for row in csv.DictReader(open(tmp_path / "gradebook.csv"))}
    assert set(rows) == {"masking-reference", "masking-skeleton", "masking-partly_wrong", "masking-syntax_error",
                         "masking-raises_at_import", "masking-infinite_loop"}
    assert rows["masking-reference"]["score"] == rows["masking-reference"]["max_score"]
    assert 0 < float(rows["masking-partly_wrong"]["score"]) < float(rows["masking-partly_wrong"]["max_score"])
    for name in ("skeleton", "syntax_error", "raises_at_import", "infinite_loop"):
        assert float(rows[f"masking-{name}"]["score"]) == 0, name
    data = json.loads((tmp_path / "partly_wrong" / "results.json").read_text())
    assert {"score", "execution_time", "tests", "output", "extra_data"} <= set(data)
    assert all(GRADESCOPE_TEST_KEYS <= set(test) for test in data["tests"])
    assert {t["visibility"] for t in data["tests"]} == {"visible", "after_due_date"}
    feedback = (tmp_path / "partly_wrong" / "feedback.md").read_text()
    assert "known mistake: The padding mask is off by one" in feedback
    reference = json.loads((tmp_path / "reference" / "results.json").read_text())
    runtime = [t for t in reference["tests"] if "runtime" in t["tags"]]
    assert runtime and all(t["status"] == "passed" and t["output"].startswith("Measured: ") for t in runtime), \
        "a passing runtime test tells the student its figures"
    assert "infinite loop" in (tmp_path / "infinite_loop" / "feedback.md").read_text()
    assert (tmp_path / "summary.md").is_file()


def test_check_works_for_a_student_without_solutions(tmp_path):
    """A copy of the harness with only public suites (what students get): check replays recorded values."""
    dist = tmp_path / "dist"
    shutil.copytree(REPO / "autograder", dist / "autograder",
                    ignore=shutil.ignore_patterns("hidden", "__pycache__"))
    work = reference_with(tmp_path, "work")
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "check", "masking", str(work)], cwd=dist,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Score: 37 / 37" in run.stdout
    broken = reference_with(tmp_path, "broken", "def masked_softmax(scores, mask=None):\n    return scores\n")
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "check", "masking", str(broken)], cwd=dist,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "FAIL" in run.stdout and "hidden tests" in run.stdout


def test_time_budget_keeps_finished_tests_and_lists_the_rest(tmp_path):
    slow = reference_with(tmp_path, "slow", textwrap.dedent("""
        import time
        _softmax = masked_softmax
        def masked_softmax(scores, mask=None):
            time.sleep(2)
            return _softmax(scores, mask)
    """))
    script = textwrap.dedent(f"""
        from pathlib import Path
        from autograder import assignment
        from autograder.runner import grade_one
        masking = assignment.load("masking")
        masking.submission_timeout = 12
        grade_one(masking, Path({str(slow)!r}), Path({str(tmp_path / "out")!r}), name="slow", public_only=True)
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    results = Results.from_gradescope(json.loads((tmp_path / "out" / "results.json").read_text()))
    assert "time budget" in results.output and results.extra_data["status"] == "incomplete: out of time"
    assert find_test(results, "causal_mask: the lower").status == "passed"
    not_run = [t for t in results.tests if "Not run" in t.output]
    assert not_run and all(t.score == 0 for t in not_run)
    assert len(results.tests) == 18, "every collected test is listed, run or not"


def _results(name: str, scores: list[tuple[float, float]], output: str = "") -> Results:
    tests = [TestResult(name=f"t{i}", number=f"1.{i}", score=s, max_score=m, status="passed" if s >= m else "failed")
             for i, (s, m) in enumerate(scores)]
    return Results(assignment="masking", submission=name, tests=tests, output=output)


def test_validate_flags_what_it_must():
    full, none = _results("reference", [(1, 1), (2, 2)]), _results("skeleton", [(0, 1), (0, 2)])
    caught, missed = _results("mutant-a", [(0, 1), (2, 2)]), _results("mutant-b", [(1, 1), (2, 2)])
    assert _judge([full, none, caught], [full, none]) == []
    assert any("no mutants" in p for p in _judge([full, none], [full, none]))
    problems = _judge([_results("reference", [(0, 1), (2, 2)]), _results("skeleton", [(1, 1), (0, 2)]), missed],
                      [full, _results("skeleton", [(1, 1)])])
    assert any("reference loses points" in p for p in problems)
    assert any("skeleton earns points" in p for p in problems)
    assert any("mutant-b loses no points" in p for p in problems)
    assert any("recorded expectations the skeleton" in p for p in problems)


def test_validate_asks_every_mutant_to_be_named(tmp_path):
    """A mutant whose feedback never names its own mistake fails validate, unless marked '# unnamed: WHY'; the
    catalogues of attention and masking hold at least 30 mistakes each, and say why for each unnamed one."""
    from autograder import assignment as assignments
    from autograder import mutants

    masking = assignments.load("masking")
    files = {"named": "", "silent": "", "slow": "# unnamed: only its runtime is wrong\n"}
    catalogue = []
    for name, marker in files.items():
        (tmp_path / f"{name}.py").write_text(f'"""Mistake {name}."""\n# target: masking.py\n{marker}')
        catalogue.append(mutants.Mutant(masking, tmp_path / f"{name}.py"))
    graded = [_results(f"mutant-{name}", [(0, 1)]) for name in files]
    graded[0].tests[0].extra_data["mistake"] = "Mistake named."
    graded[1].tests[0].extra_data["mistake"] = "Mistake named."  # another mistake's name is not its own
    assert _unnamed(graded, catalogue) == [_unnamed([graded[1]], [catalogue[1]])[0]]
    assert "mutant-silent loses points but its feedback never names it" in _unnamed(graded, catalogue)[0]
    for name in ("attention", "masking"):
        catalogue = mutants.catalog(assignments.load(name))
        assert len(catalogue) >= 30, name
        assert all(m.unnamed is None or len(m.unnamed) > 10 for m in catalogue)


def test_unknown_assignment_is_a_clear_error(caplog):
    assert cli.main(["check", "nonsense", "."]) == 2
    assert re.search(r"known assignments: [\w, ]*\bmasking\b", caplog.text)  # listed among whichever others exist


def test_grade_with_nothing_to_grade(tmp_path):
    (tmp_path / "nothing").mkdir()
    assert cli.main(["grade", str(tmp_path / "nothing"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    results = json.loads((tmp_path / "out" / "nothing" / "results.json").read_text())
    assert "could not tell which assignment" in results["output"]


def test_a_sandbox_that_cannot_start_is_the_graders_failure(tmp_path, monkeypatch):
    """No point, every test listed, and a status and message that blame the grader, not the student."""
    from autograder import runner
    from autograder.sandbox import Isolation

    monkeypatch.setattr(runner.Isolation, "detect", classmethod(lambda cls: Isolation("limits", problem="no uid")))
    results = runner.grade_one(MASKING, MASKING.solution_dir, tmp_path / "out", name="reference", public_only=True)
    assert results.score == 0 and results.max_score > 0
    assert results.extra_data["status"].startswith("grader failed: the grader could not start")
    assert "The grader failed, not your code" in results.output
