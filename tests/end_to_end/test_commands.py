"""The commands as their users run them: grade (the demo), check (a student without solutions), validate."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from support.submissions import MASKING, REPO, find_test, reference_with

from autograder import cli, course
from autograder.authoring.validate import _judge, _judge_alternatives, _judge_secret, _unnamed
from autograder.results import Results, TestResult, points
from autograder.sandbox import permissions

pytestmark = pytest.mark.slow

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


@pytest.mark.skipif(os.geteuid() != 0, reason="needs another user's view: run as root")
def test_staff_kept_from_the_solutions_check_as_students_do(monkeypatch):
    """Course staff may keep ``solutions/`` and the hidden suites from a TA's account: to that account the reference
    is absent and the committed seed empty (its `check` replays the public recordings), where reading whether they
    were there raised PermissionError."""
    masking = course.load("masking")
    checkout = Path(tempfile.mkdtemp(prefix="autograder-staff-"))
    try:
        (checkout / "solutions" / "masking").mkdir(parents=True)
        (checkout / "solutions" / "masking" / "masking.py").write_text("")
        (checkout / "suites" / "masking" / "hidden").mkdir(parents=True)
        (checkout / "suites" / "masking" / "hidden" / "SECRET").write_text("seed\n")
        monkeypatch.setattr(course, "REPO_ROOT", checkout)
        monkeypatch.setattr(course, "SUITES_DIR", checkout / "suites")
        for mode, seen in ((0o755, [True, "seed"]), (0o700, [False, ""])):
            os.chmod(checkout, mode)
            assert _as_user(permissions.UID_POOL[-1], lambda: [masking.has_reference, masking.committed_secret]) == seen
    finally:
        shutil.rmtree(checkout)


def _as_user(uid: int, question):
    """``question()`` answered by a fork of this process that acts as ``uid`` (JSON through a pipe; None if it
    failed)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setegid(uid)
            os.seteuid(uid)
            os.write(write, json.dumps(question()).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    with os.fdopen(read) as answer:
        return json.loads(answer.read() or "null")


def test_the_command_exits_with_mains_status_after_the_exit_handlers(tmp_path):
    """``autograder`` skips the interpreter's teardown (``cli.run``): the exit handlers still run, what they and the
    command printed still arrives (through a pipe, where output is buffered), and the status is main's."""
    (tmp_path / "empty").mkdir()
    code = ("import atexit, sys; from autograder import cli; atexit.register(print, 'handlers ran'); "
            "sys.argv[1:] = ['check', 'masking', sys.argv[1]]; cli.run()")
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "empty")], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and run.stdout == "handlers ran\n"
    assert run.stderr.endswith("give the folder that holds your masking files (`autograder check masking FOLDER`)\n")


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
        from autograder import course
        from autograder.grading.runner import grade_one
        from autograder.grading_options import GradingOptions
        masking = course.load("masking")
        masking.submission_timeout = 12
        grade_one(masking, Path({str(slow)!r}), Path({str(tmp_path / "out")!r}), name="slow",
                  options=GradingOptions(public_only=True))
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


def test_validate_flags_hidden_verdicts_that_depend_on_the_secret():
    committed = [_results("reference", [(1, 1), (2, 2)]), _results("skeleton", [(0, 1), (0, 2)]),
                 _results("mutant-a", [(0, 1), (2, 2)]), _results("mutant-b", [(1, 1), (0, 2)])]
    assert _judge_secret("s", committed, committed) == []
    fresh = [_results("reference", [(1, 1), (1, 2)]), _results("skeleton", [(0, 1), (2, 2)]),
             _results("mutant-a", [(1, 1), (2, 2)]), _results("mutant-b", [(1, 1), (0, 2)])]
    problems = _judge_secret("s", committed, fresh)
    assert problems == ["under the secret 's' the reference loses points on: t1",
                        "skeleton: under the secret 's' the verdict of t1 changes: make its draw exercise what it "
                        "checks whatever the secret",
                        "under the secret 's' the untouched skeleton earns hidden points",
                        "mutant-a: under the secret 's' the verdict of t0 changes: make its draw exercise what it "
                        "checks whatever the secret",
                        "mutant-a loses no points under the secret 's'"]


def test_validate_asks_every_alternative_to_keep_every_point():
    """A correct alternative that loses a point, partly or under a fresh secret, or that ran nothing, fails validate."""
    full = _results("alternative-einsum", [(1, 1), (2, 2)])
    assert _judge_alternatives([full]) == []
    partial = _results("alternative-loops", [(1, 1), (1.5, 2)])
    empty = _results("alternative-broken", [], output="The grader itself failed")
    assert _judge_alternatives([full, partial, empty]) == [
        "alternative-loops, a correct alternative, loses points on: t1: fix the check if it fails a correct solution, "
        "or the alternative if it breaks a rule the skeleton states",
        "alternative-broken, a correct alternative, loses points on: The grader itself failed: fix the check if it "
        "fails a correct solution, or the alternative if it breaks a rule the skeleton states"]
    committed = [_results("reference", [(1, 1)]), _results("skeleton", [(0, 1)]), _results("alternative-a", [(1, 1)])]
    fresh = [_results("reference", [(1, 1)]), _results("skeleton", [(0, 1)]), _results("alternative-a", [(0, 1)])]
    assert _judge_secret("s", committed, fresh) == ["under the secret 's' the alternative-a loses points on: t0"]


def test_the_catalogue_holds_three_alternatives_per_assignment():
    """Every assignment has at least three correct alternatives, each a docstring that says its style, a target among
    its own files and the canary line (tests/alternatives is never shipped, and a leak is found)."""
    from autograder.authoring import alternatives

    for name in course.names():
        catalogue = alternatives.catalog(course.load(name))
        assert len(catalogue) >= 3, name
        for alternative in catalogue:
            assert len(alternative.description) > 40 and alternative.target, alternative.path
            assert course.CANARY in alternative.source, alternative.path


def test_validate_asks_every_mutant_to_be_named(tmp_path):
    """A mutant whose feedback never names its own mistake fails validate, unless marked '# unnamed: WHY'; the
    catalogues of attention and masking hold at least 30 mistakes each, and say why for each unnamed one."""
    from autograder import course
    from autograder.grading import mutants

    masking = course.load("masking")
    files = {"named": "", "silent": "", "slow": "# unnamed: only its runtime is wrong\n"}
    catalogue = []
    for name, marker in files.items():
        (tmp_path / f"{name}.py").write_text(f'"""Mistake {name}."""\n# target: masking.py\n{marker}')
        catalogue.append(mutants.Mutant(masking, tmp_path / f"{name}.py"))
    graded = [_results(f"mutant-{name}", [(0, 1)]) for name in files]
    graded[0].tests[0].extra_data["mistake"] = "Mistake named."
    graded[1].tests[0].extra_data["mistake"] = "Mistake named."  # another mistake's name is not its own
    misnamed, silent = _unnamed(graded, catalogue)
    assert misnamed == "mutant-silent is named as another mistake: 'Mistake named.': make the tests' inputs give " \
                       "the two different outputs"
    assert "mutant-silent loses points but its feedback never names it" in silent
    graded[1].tests[0].extra_data = {"mistakes_alike": ["Mistake silent.", "Mistake named."]}  # two alike: no name
    assert _unnamed([graded[1]], [catalogue[1]]) == [
        "mutant-silent loses points but its feedback never names it: make a test compare an output that tells it "
        "apart (or mark it '# unnamed: WHY'); on the inputs of the tests it fails its output is also that of: "
        "Mistake named.: change those inputs so that the two differ"]
    for name in ("attention", "masking"):
        catalogue = mutants.catalog(course.load(name))
        assert len(catalogue) >= 30, name
        assert all(m.unnamed is None or len(m.unnamed) > 10 for m in catalogue)


def test_validate_counts_how_mutants_are_named(tmp_path):
    """validate's naming line: named as itself (confirmed by the probes, or on a test alone), as another, or not."""
    from autograder import course
    from autograder.authoring.validate import _naming
    from autograder.grading import mutants

    masking = course.load("masking")
    catalogue = []
    for name in ("probed", "alone", "misnamed", "silent"):
        (tmp_path / f"{name}.py").write_text(f'"""Mistake {name}."""\n# target: masking.py\n')
        catalogue.append(mutants.Mutant(masking, tmp_path / f"{name}.py"))
    graded = [_results(f"mutant-{m.name}", [(0, 1)]) for m in catalogue]
    graded[0].tests[0].extra_data = {"mistake": "Mistake probed."}
    graded[1].tests[0].extra_data = {"mistake": "Mistake alone.", "mistake_unprobed": True}
    graded[2].tests[0].extra_data = {"mistake": "Mistake probed."}
    assert _naming(graded, catalogue) == ("naming: 2 of 4 mutants named as themselves (1 confirmed by the probes, 1 on "
                                          "a test alone), 1 as another mistake, 1 not named")


def test_unknown_assignment_is_a_clear_error(caplog):
    assert cli.main(["check", "nonsense", "."]) == 2
    assert re.search(r"known assignments: [\w, ]*\bmasking\b", caplog.text)  # listed among whichever others exist


def test_grade_with_nothing_to_grade(tmp_path, caplog):
    """Paths that hold no submission are graded as "not graded", said at the end, and the batch exits 1; a zip that
    is not one and an empty folder are said so before any assignment is detected."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("my notes\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "notazip.zip").write_text("hello\n")
    paths = [str(tmp_path / name) for name in ("notes", "empty", "notazip.zip")]
    assert cli.main(["grade", *paths, "--out", str(tmp_path / "out"), "--quiet"]) == 1
    output = {name: json.loads((tmp_path / "out" / name / "results.json").read_text())["output"]
              for name in ("notes", "empty", "notazip")}
    assert "could not tell which assignment" in output["notes"]
    assert "empty holds no files" in output["empty"]
    assert "notazip.zip is not a readable zip file" in output["notazip"] and "which assignment" not in output["notazip"]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors[:3] == [f"not graded: {name}: {output[name].removeprefix('Your submission could not be graded: ')}"
                          .rstrip(".") for name in ("notes", "empty", "notazip")]
    assert "3 of 3 submissions were not graded" in errors[3]
    with open(tmp_path / "out" / "gradebook.csv") as gradebook:
        rows = list(csv.DictReader(gradebook))
    assert [(row["submission"], row["status"], row["score"]) for row in rows] == [
        (name, "not graded", "") for name in ("empty", "notazip", "notes")], "a row each, with no score"


def test_grade_refuses_a_path_that_does_not_exist(tmp_path, caplog):
    """One line, exit status 2, nothing written, nothing graded (the other path is a real submission)."""
    real = reference_with(tmp_path, "real")
    assert cli.main(["grade", str(real), str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors == [f"error: {tmp_path / 'nowhere'} does not exist; nothing was graded"]


def test_check_a_folder_that_does_not_exist_is_one_line(tmp_path, caplog, capsys):
    assert cli.main(["check", "masking", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().out == ""
    assert [r.getMessage() for r in caplog.records] == [
        f"error: {tmp_path / 'nowhere'} does not exist; give the folder that holds your masking.py "
        "(`autograder check masking FOLDER`)"]
    (tmp_path / "empty").mkdir()
    caplog.clear()
    assert cli.main(["check", "masking", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().out == "" and "Score" not in caplog.text
    assert [r.getMessage() for r in caplog.records] == [
        f"error: no masking.py in {tmp_path / 'empty'}; give the folder that holds your masking files "
        "(`autograder check masking FOLDER`)"]


def test_a_submission_that_does_not_load_is_said_once_at_the_top(tmp_path):
    """The reason heads the feedback; each test points at it instead of repeating it; a 0-point test that "passed"
    (the rules report) is not counted among the passed tests."""
    from autograder.batch.gradebook import passed, summary_markdown
    from autograder.grading import runner
    from autograder.grading_options import GradingOptions

    broken = reference_with(tmp_path, "broken", replace="raise RuntimeError('boom at import time')\n")
    results = runner.grade_one(MASKING, broken, tmp_path / "out", name="broken",
                               options=GradingOptions(public_only=True))
    assert results.score == 0 and results.output.startswith("Your code could not be loaded")
    feedback = (tmp_path / "out" / "feedback.md").read_text()
    assert feedback.count("raised RuntimeError: boom at import time") == 1
    assert feedback.index("boom at import time") < feedback.index("## [")
    scored = [t for t in results.tests if t.max_score > 0]
    assert all(t.output == "Not run: your code did not load (see the top of this report)." for t in scored)
    assert len(scored) < len(results.tests) and passed(results) == f"0/{len(scored)}"
    assert f"| 0 / {points(results.max_score)} | 0/{len(scored)} |" in summary_markdown([results])


def test_feedback_keeps_its_line_breaks_in_the_terminal_and_on_gradescope():
    """Markdown joins consecutive lines; the diagnostic lines of a failed comparison stay lines where rendered."""
    from io import StringIO

    from rich.console import Console
    from rich.markdown import Markdown

    from autograder.results import markdown_lines

    message = ("- FAILED: masked_softmax(x)\n  the weights: 3 of 12 entries differ\n  first at index (0, 1)\n"
               "  largest error 0.2 at index (0, 1)\n- passed: masked_softmax(y)\n\nYour code printed:\n```\nA\nB\n```")
    results = Results(assignment="masking", submission="s", output="Line one\nline two", tests=[
        TestResult(name="t", number="1.1", score=0, max_score=1, status="failed", output=message)])
    console = Console(file=StringIO(), width=200)
    console.print(Markdown(results.feedback()))
    shown = [line.strip() for line in console.file.getvalue().splitlines()]
    for line in ("Line one", "line two", "the weights: 3 of 12 entries differ", "first at index (0, 1)",
                 "largest error 0.2 at index (0, 1)", "A", "B"):
        assert line in shown, (line, shown)
    data = results.to_gradescope()
    assert data["tests"][0]["output"] == markdown_lines(message) and data["output"] == "Line one  \nline two"
    assert markdown_lines(markdown_lines(message)) == markdown_lines(message)
    assert "```\nA\nB\n```" in markdown_lines(message), "fenced code is left as it is"


def test_help_lists_every_command_with_an_example(capsys):
    parser = cli.build_parser()
    try:
        cli.main(["--help"])
    except SystemExit as exit:
        assert exit.code == 0
    shown = capsys.readouterr().out
    commands = parser._subparsers._group_actions[0].choices
    assert "``" not in shown
    for name, sub in commands.items():
        summary = next(a.help for a in parser._subparsers._group_actions[0]._choices_actions if a.dest == name)
        assert re.search(rf"^    {name} +{re.escape(summary)}$", shown, re.M), f"{name}: one line in the help"
        assert re.search(rf"^  autograder {name}\b", shown, re.M), f"{name}: an example in the help"
        assert f"autograder {name}" in sub.format_help()
    try:
        cli.main(["--version"])
    except SystemExit as exit:
        assert exit.code == 0
    assert re.fullmatch(r"autograder \d+\.\d+\.\d+\n", capsys.readouterr().out)
    check = commands["check"].format_help()
    assert "PASS or FAIL" in check and re.search(r"exit status: 0 every public test passed; 1 some failed; 2 ", check)


def test_a_sandbox_that_cannot_start_is_the_graders_failure(tmp_path, monkeypatch):
    """No point, every test listed, and a status and message that blame the grader, not the student."""
    from autograder.grading import runner
    from autograder.grading_options import GradingOptions
    from autograder.sandbox.isolation import Isolation

    monkeypatch.setattr(runner.Isolation, "detect", classmethod(lambda cls: Isolation("limits", problem="no uid")))
    results = runner.grade_one(MASKING, MASKING.solution_dir, tmp_path / "out", name="reference",
                               options=GradingOptions(public_only=True))
    assert results.score == 0 and results.max_score > 0
    assert results.extra_data["status"].startswith("grader failed: the grader could not start")
    assert "The grader failed, not your code" in results.output
