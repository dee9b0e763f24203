"""Notebook assignments: Otter Assign builds, the leak check, written answers."""

import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest

from autograder import course
from autograder.authoring import leaks, notebooks
from autograder.grading import answers
from autograder.notebook_cells import NotebookUnreadable, run_notebook
from autograder.worker.serve import Worker
from autograder.worker.traps import Traps

CONFIG = ("# ASSIGNMENT CONFIG\nname: demo\ninit_cell: true\ncheck_all_cell: false\nexport_cell: false\n"
          "generate: false\nrun_tests: false\nsolutions_pdf: false\ntemplate_pdf: false\n")


def master(tmp_path, helper_outside_block: bool = False):
    cells = [
        nbformat.v4.new_raw_cell(CONFIG),
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 2"),
        nbformat.v4.new_markdown_cell("**Question 1.** Write `double`."),
        nbformat.v4.new_raw_cell("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell("def double(x):\n    # BEGIN SOLUTION\n    doubled_value = 2 * x\n"
                                  "    return doubled_value\n    # END SOLUTION"),
        nbformat.v4.new_raw_cell("# END SOLUTION"),
        nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        nbformat.v4.new_code_cell("assert double(2) == 4"),
        nbformat.v4.new_code_cell("# HIDDEN\nassert double(123456) == 246912"),
        nbformat.v4.new_raw_cell("# END TESTS"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: why\nmanual: true\npoints: 3"),
        nbformat.v4.new_markdown_cell("**Question 2.** Why does doubling help?"),
        nbformat.v4.new_raw_cell("# BEGIN SOLUTION"),
        nbformat.v4.new_markdown_cell("Because the model answer says so."),
        nbformat.v4.new_raw_cell("# END SOLUTION"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
    ]
    if helper_outside_block:  # a solution line pasted into a prompt: Otter would copy it silently
        cells.insert(2, nbformat.v4.new_code_cell("doubled_value = 2 * x  # SOLUTION"))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "demo.ipynb"
    nbformat.write(notebook, path)
    return path


def test_assign_is_reproducible_and_hides_solutions(tmp_path):
    path = master(tmp_path)
    first, second = notebooks.assign(path), notebooks.assign(path)
    assert first == second and set(first) == {"demo.ipynb"}
    text = first["demo.ipynb"].decode()
    assert "doubled_value" not in text and "246912" not in text and "model answer" not in text
    assert 'grader.check(\\"q1\\")' in text and "double(2) == 4" in text
    assert leaked(path, first) == []


def leaked(master: Path, files: dict[str, bytes]) -> list[tuple[str, str]]:
    """What the build's check finds of the master's secret lines in built student files: (file, line)."""
    return [(leak.path, leak.reason.rpartition(": ")[2].strip("'")) for leak in
            leaks.scan(files, leaks.Secrets.of_notebook(master))]


def test_leaked_solution_lines_are_found(tmp_path):
    path = master(tmp_path)
    planted = notebooks.assign(path)
    notebook = json.loads(planted["demo.ipynb"])
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "assert double(123456) == 246912\n"})
    planted["demo.ipynb"] = json.dumps(notebook).encode()
    assert leaked(path, planted) == [("demo.ipynb", "assert double(123456) == 246912")]


def test_solution_line_outside_a_block_is_caught(tmp_path):
    """Otter copies a marked line that sits outside a solution block into the student notebook."""
    path = master(tmp_path, helper_outside_block=True)
    assert leaked(path, notebooks.assign(path)) == [("demo.ipynb", "doubled_value = 2 * x")]


def test_manual_questions_and_answers(tmp_path):
    path = master(tmp_path)
    questions = notebooks.manual_questions(path)
    assert [(q["name"], q["points"]) for q in questions] == [("why", 3.0)]
    student = json.loads(notebooks.assign(path)["demo.ipynb"])
    for cell in student["cells"]:
        if "otter_answer_cell" in cell["metadata"].get("tags", []) and cell["cell_type"] == "markdown":
            cell["source"] = "It keeps the gradient large."
    submitted = tmp_path / "submitted.ipynb"
    submitted.write_text(json.dumps(student))
    assert answers.collect_answers(submitted, questions) == {"why": "It keeps the gradient large."}
    unanswered = tmp_path / "unanswered.ipynb"
    unanswered.write_bytes(notebooks.assign(path)["demo.ipynb"])
    assert answers.collect_answers(unanswered, questions) == {"why": ""}


def test_unreadable_notebook(tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{not json")
    with pytest.raises(answers.NotebookError, match="broken.ipynb is not a valid notebook file"):
        answers.cells(broken)


def test_graded_notebooks_run_headless_and_keep_going(tmp_path):
    """Plots never open windows (and are closed), `display` works, a crashing cell does not stop the rest, and a
    master's Otter test cells are not run as code."""
    import matplotlib

    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Not code"),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\n"
                                  "open_during_cell = len(plt.get_fignums())"),
        nbformat.v4.new_code_cell("display('only Jupyter shows this')\nafter_display = 1"),
        nbformat.v4.new_code_cell("raise RuntimeError('boom')"),
        nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        nbformat.v4.new_code_cell("assert otter_test_ran_as_code"),
        nbformat.v4.new_raw_cell("# END TESTS"),
        nbformat.v4.new_code_cell("%matplotlib inline\ndef later():\n    return 2"),
    ])
    path = tmp_path / "demo.ipynb"
    nbformat.write(notebook, path)
    module, errors = run_notebook("demo_headless", str(path))
    assert module.open_during_cell == 1 and module.after_display == 1 and module.later() == 2
    assert errors == ["cell 4 raised RuntimeError: boom"]
    assert matplotlib.get_backend().lower() == "agg"
    assert matplotlib.pyplot.get_fignums() == []


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a valid notebook file (it is not JSON at line 1, column 2)"),
    ('{"cells": 3}', "JSON but not a notebook"),
    ("[]", "JSON but not a notebook"),
])
def test_unreadable_submitted_notebook_says_what_to_do(tmp_path, content, message):
    path = tmp_path / "broken.ipynb"
    path.write_text(content)
    with pytest.raises(NotebookUnreadable, match=re.escape(message)):
        run_notebook("demo_broken", str(path))


def test_solved_student_notebook_holds_the_master_solutions(tmp_path):
    """A perfect submission, built from the student notebook: answers in, markers out, checks and prompts kept."""
    path = master(tmp_path)
    student = notebooks.assign(path)["demo.ipynb"]
    solved = json.loads(notebooks.solved(path, student))
    sources = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
               for cell in solved["cells"]]
    assert "def double(x):\n    doubled_value = 2 * x\n    return doubled_value" in sources
    assert "Because the model answer says so." in sources
    assert 'grader.check("q1")' in sources and not any("SOLUTION" in s for s in sources)
    module, errors = run_notebook("demo_solved", str(_write(tmp_path / "solved.ipynb", solved)))
    assert errors == [] and module.double(21) == 42
    written = answers.collect_answers(tmp_path / "solved.ipynb", notebooks.manual_questions(path))
    assert written == {"why": "Because the model answer says so."}


def _write(path, notebook: dict):
    path.write_text(json.dumps(notebook))
    return path


def test_a_name_missing_after_a_crashing_cell_points_at_the_cell(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("raise ValueError('early')\ndef f():\n"
                                                                         "    return 1")])
    nbformat.write(notebook, tmp_path / "demo.ipynb")
    worker = Worker([{"name": "demo_missing", "notebook": "demo.ipynb"}], Traps([]), str(tmp_path))
    assert worker.load() == {"warnings": ["cell 1 raised ValueError: early"]}
    reply, _ = worker.handle({"op": "getattr", "target": {"module": "demo_missing", "path": ["f"]}}, [])
    assert not reply["ok"] and "a cell of your notebook raised an error before defining it" in reply["error"]["message"]


SKELETON_NOTEBOOKS = ["attention", "positions"]


def _run_all(name: str, folder) -> nbformat.NotebookNode:
    """"Run All" on an untouched skeleton notebook, in a real Jupyter kernel of this environment, errors kept."""
    from nbclient import NotebookClient

    shutil.copytree(course.load(name).skeleton_dir, folder)
    notebook = nbformat.read(folder / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return notebook


@pytest.fixture(scope="module")
def run_skeletons(tmp_path_factory) -> dict:
    """Every notebook skeleton run top to bottom, two at a time (CI has two cores)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda name: _run_all(name, tmp_path_factory.mktemp("run") / name), SKELETON_NOTEBOOKS)
        return dict(zip(SKELETON_NOTEBOOKS, runs, strict=True))


@pytest.mark.parametrize("name", SKELETON_NOTEBOOKS)
def test_a_skeleton_notebook_runs_top_to_bottom(name, run_skeletons):
    """No cell of an unfinished notebook raises: a demo cell says which function to write instead."""
    code = [cell for cell in run_skeletons[name].cells if cell.cell_type == "code"]
    errors = [f"{cell.source[:80]!r}: {out.ename}: {out.evalue[:200]}" for cell in code
              for out in cell.get("outputs", []) if out.output_type == "error"]
    assert errors == [], "cells raised on Run All:\n" + "\n".join(errors)
    printed = "".join(out.get("text", "") for cell in code for out in cell.get("outputs", []))
    assert re.search(r"Not shown yet: write `\w+` first \(\w+: ", printed), "a demo cell names what to write"


@pytest.mark.parametrize("question, answer", [("softmax_axis", 0), ("causal_candidate", 1),
                                              ("single_head_behaviour", "a"), ("c2_identity", "b")])
def test_a_multiple_choice_check_says_only_the_format_was_checked(question, answer):
    """``grader.check`` on a multiple-choice question checks the format alone, so whatever answer it accepts (a wrong
    one too) must be told that the answer itself is graded later, not only "All test cases passed!"."""
    from otter.test_files.exception_test import ExceptionTestFile

    notebook = course.load("attention").skeleton_dir / "attention.ipynb"
    source = json.loads(notebook.read_text())["metadata"]["otter"]["tests"][question]
    check = ExceptionTestFile.from_metadata(source, str(notebook))
    check.run({question: answer})
    assert "Only the format is checked here" in check.summary()
    assert "graded after the deadline" in check.summary()


def test_assign_changes_a_notebooks_globals_through_the_proxy():
    """``RemoteAttr.assign`` sets names in a student's module, as the check that a notebook's answers read their
    arguments (attention's test_answers_read_their_arguments) changes the setup constants and puts them back."""
    import types

    from autograder.grading.notebook_checks import NotebookStudent

    module = types.ModuleType("attention")
    exec("N_KEYS = 5\n\ndef scale(x):\n    return x * N_KEYS\n", module.__dict__)  # noqa: S102 - our own text
    student = NotebookStudent(course.load("attention"), {"attention": module})
    assert student.attention.scale(2) == 10
    student.attention.assign({"N_KEYS": 7})
    assert student.attention.scale(2) == 14 and module.N_KEYS == 7
