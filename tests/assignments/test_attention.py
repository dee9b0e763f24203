"""The attention notebook assignment: the student notebook in Jupyter, the leak check, the examples, and the
statistical margins of the Monte Carlo checks.

The notebook runs in a real Jupyter kernel (nbclient with ipykernel's ``python3`` kernel from this virtual
environment), the way a student runs it: top to bottom, with Otter's ``grader.check`` cells, then handed in with
``autograder zip``.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
import torch
from support.submissions import REPO
from nbclient import NotebookClient

from autograder import cli, course
from autograder.authoring import leaks, markers, notebooks
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.grading import Parts, trusted_import
from autograder.grading_options import GradingOptions
from autograder.suites.attention import common, properties

pytestmark = pytest.mark.slow

ATTENTION = course.load("attention")
MASTER = ATTENTION.solution_dir / "attention.ipynb"
STUDENT = ATTENTION.skeleton_dir / "attention.ipynb"


def execute(data: bytes, folder: Path, extra: str = "") -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a fresh Jupyter kernel in ``folder``, errors recorded, not raised."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "attention.ipynb").write_bytes(data)
    notebook = nbformat.reads(data.decode(), as_version=4)
    if extra:
        notebook.cells.append(nbformat.v4.new_code_cell(extra))
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # the kernel's own (inline) backend draws
    client = NotebookClient(notebook, timeout=180, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    client.execute(env=env)
    return notebook


def errors(notebook: nbformat.NotebookNode) -> list[tuple[int, str, str]]:
    return [(index, out["ename"], out["evalue"]) for index, cell in enumerate(notebook.cells)
            for out in cell.get("outputs", []) if out.get("output_type") == "error"]


def test_solved_student_notebook_runs_top_to_bottom_and_its_zip_earns_full_public_marks(tmp_path, caplog):
    """A student who answers everything: every cell runs, every public check passes, Run All writes no zip (one way
    to hand in: `autograder zip`), and the zip of the notebook as saved grades fully."""
    solved = notebooks.solved(MASTER, STUDENT.read_bytes())
    names = list(json.loads(solved)["metadata"]["otter"]["tests"])
    notebook = execute(solved, tmp_path / "work",
                       f"_checks = {{name: grader.check(name).passed_all for name in {names!r}}}\nprint(_checks)")
    assert errors(notebook) == []
    assert notebook.cells[-1].outputs[0]["text"].strip() == str(dict.fromkeys(names, True))
    images = sum("image/png" in out.get("data", {}) for cell in notebook.cells for out in cell.get("outputs", []))
    assert images >= 6, "the plots should be drawn in Jupyter"
    assert not list((tmp_path / "work").glob("*.zip")), "running the notebook hands nothing in"
    notebook.cells.pop()  # the test's own cell
    nbformat.write(notebook, tmp_path / "work" / "attention.ipynb")
    handed_in = tmp_path / "attention-submission.zip"
    assert cli.main(["zip", "attention", str(tmp_path / "work"), "--out", str(handed_in)]) == 0, caplog.text
    results = grade_all(discover([handed_in], "attention"), tmp_path / "graded",
                        GradingOptions(public_only=True, oracle="replay"), progress=False)
    assert results[0].score == results[0].max_score > 0, results[0].feedback()


def test_a_check_cell_shows_what_autograder_check_says(tmp_path):
    """`grader.check` runs the question's public tests in the kernel: on a known mistake it shows the grader's
    feedback (the first wrong entry, the largest error, the mistake named), not a doctest dump with a traceback."""
    solved = nbformat.reads(notebooks.solved(MASTER, STUDENT.read_bytes()).decode(), as_version=4)
    first = next(i for i, cell in enumerate(solved.cells) if cell.source.strip() == 'grader.check("scores")')
    mistake = (ATTENTION.mutants_dir / "scores_unscaled.py").read_text()  # scaled_dot_scores without 1/sqrt(d_k)
    solved.cells = [*solved.cells[:first + 1], nbformat.v4.new_code_cell(mistake),
                    nbformat.v4.new_code_cell('grader.check("scores")')]
    notebook = execute(nbformat.writes(solved).encode(), tmp_path / "work")
    assert errors(notebook) == []
    passed, failed = ("".join(out.get("data", {}).get("text/plain", "") for out in notebook.cells[index].outputs)
                      for index in (first, -1))
    assert "All test cases passed!" in passed, passed
    assert "This looks like a known mistake: scaled_dot_scores forgets to divide by sqrt(d_k)" in failed, failed
    assert "- FAILED: scaled_dot_scores with d_k = 16" in failed and "first at index (0, 0)" in failed, failed
    assert "largest error" in failed and "Traceback" not in failed and "Failed example" not in failed, failed


def test_leak_check_covers_the_attention_notebook():
    """Solution code, model answers and hidden tests never reach the student notebook, and a planted line is found."""
    secret = notebooks.secret_lines(MASTER)
    assert "return torch.linalg.pinv(keys) @ target" in secret  # solution code
    assert any(line.startswith("e^m / (e^m + n - 1)") for line in secret)  # a model answer to a written question
    student = STUDENT.read_bytes()
    secrets = leaks.Secrets.of_notebook(MASTER)
    assert leaks.scan({"attention.ipynb": student}, secrets) == []
    text = notebooks.notebook_text(student)
    hidden = (ATTENTION.hidden_dir / "test_hidden.py").read_text()
    hidden_lines = [line for line in markers.significant(hidden.splitlines())
                    if not line.startswith(("import ", "from "))]
    assert hidden_lines and not [line for line in hidden_lines if line in text]
    assert course.CANARY not in student.decode()
    solution_line = "return torch.linalg.pinv(keys) @ target"
    given_line = "sigmas[perturbed] += 0.5 * torch.outer(mu[perturbed], mu[perturbed])"  # the notebook shows it
    found = leaks.scan({"attention.ipynb": _planted(student, solution_line)}, secrets)
    assert [(leak.path, solution_line in leak.reason) for leak in found] == [("attention.ipynb", True)]
    assert leaks.scan({"attention.ipynb": _planted(student, given_line)}, secrets) == []


def _planted(student: bytes, line: str) -> bytes:
    """The student notebook with ``line`` pasted into its first answer cell, as a careless build would."""
    notebook = json.loads(student)
    answer = next(c for c in notebook["cells"] if notebooks.ANSWER_TAG in c["metadata"].get("tags", []))
    answer["source"] = "".join(answer["source"]) + "\n    " + line
    return json.dumps(notebook).encode()


def test_examples_grade_as_described(tmp_path):
    """The partly wrong, crashing and unreadable example notebooks: scores, named mistakes and written answers."""
    examples = REPO / "examples" / "attention"
    paths = [examples / name for name in ("partly_wrong", "cells_crash", "not_a_notebook")]
    assert cli.main(["grade", *map(str, paths), "--out", str(tmp_path), "--jobs", "2", "--quiet"]) == 0
    rows = {row["submission"]: row for row in csv.DictReader(open(tmp_path / "gradebook.csv"))}
    score = {name: (float(rows[name]["score"]), float(rows[name]["max_score"])) for name in rows}
    assert 0 < score["partly_wrong"][0] < score["partly_wrong"][1]
    assert 0 < score["cells_crash"][0] < score["cells_crash"][1] and score["not_a_notebook"][0] == 0
    feedback = (tmp_path / "partly_wrong" / "feedback.md").read_text()
    assert "known mistake: smallest_scale compares B with a single A" in feedback
    assert "Your query points along key j" in feedback and "your two queries are the same" in feedback
    crashed = (tmp_path / "cells_crash" / "feedback.md").read_text()
    assert "Some notebook cells raised errors" in crashed and "SyntaxError" in crashed
    assert "raised an error before defining it" in crashed
    unreadable = json.loads((tmp_path / "not_a_notebook" / "results.json").read_text())
    assert "is not a valid notebook file" in unreadable["output"] and len(unreadable["tests"]) > 30
    written = {row["question"]: row["answer"] for row in csv.DictReader(open(tmp_path / "manual_answers.csv"))
               if row["submission"] == "partly_wrong"}
    assert written["copy_when"].startswith("It works when the keys are orthogonal") and written["synthesizer"] == ""
    results = json.loads((tmp_path / "partly_wrong" / "results.json").read_text())
    manual = [t for t in results["tests"] if t["extra_data"].get("manual")]
    assert [t["extra_data"]["question"] for t in manual] == ["why_sqrt_dk", "copy_when", "single_vs_multi",
                                                             "synthesizer"]
    assert all(t["max_score"] == 0 and t["extra_data"]["points"] == 2 for t in manual)


@pytest.fixture(scope="module")
def reference():
    """The reference notebook, run in this process, standing in for the student proxy."""
    torch.set_num_threads(1)
    return trusted_import.load(ATTENTION.solution_dir, ATTENTION.modules).attention


@pytest.mark.parametrize("seed", range(0, 400, 25))
def test_the_reference_passes_the_monte_carlo_checks_for_any_secret(reference, seed):
    """Statistical tolerances leave a correct design a wide margin: any term's secret seed gives full marks."""
    parts = Parts()
    n, d, a, b = common.config(seed)
    properties.check_single_head(reference, n, d, a, b, seed)
    properties.check_multi_head(reference, parts, n, d, a, b, seed)
    mu, _ = properties.setup(n, d, a, b, seed)
    properties.check_experiment(reference, (8.0 * (mu[a] + mu[b]))[None], n, d, a, b, perturbed=True,
                                num_samples=2000, seed=seed, parts=parts)
    keys = common.general_keys(n, d, seed)
    properties.check_copy(reference, keys, common.dominated_key(keys), "")
    properties.check_average(reference, common.orthonormal(n, d, seed), a, b, seed, "")
    properties.check_kqv(reference, properties.kqv_vectors(d + 4, 5.0 + seed % 10, seed), "")
    assert parts.all_passed, parts.summary()


def test_single_and_multi_head_differ_where_the_question_says(reference):
    """The measured behaviour the questions describe: one head flips in case (ii), two heads do not."""
    mu, values, a, b = reference.MU, reference.VALUES, reference.A_INDEX, reference.B_INDEX
    single = reference.single_head_query(mu, a, b)[None]
    multi = torch.stack(reference.multihead_queries(mu, a, b))
    flips = common.measure(single, mu, values, a, b, perturbed=True, seed=1)
    assert flips["relative"] > 0.7 and 0.3 < flips["toward_a"] < 0.7
    assert common.measure(multi, mu, values, a, b, perturbed=True, seed=1)["relative"] < 0.5 * flips["relative"]


def test_failed_measurements_say_which_mistake_they_point_to(reference):
    """The experiment-style checks name typical mistakes (wrong designs built here, in this process)."""
    def wrong(**replaced):
        return SimpleNamespace(**{**vars(reference), **replaced})

    keys = common.general_keys(5, 6, 3)
    with pytest.raises(AssertionError, match="Your query points along key j"):
        properties.check_copy(wrong(copy_query=lambda k, j: 20.0 * k[j]), keys, common.dominated_key(keys), "")
    orthonormal = common.orthonormal(6, 6, 2)  # a lead of log 99 forgets that 5 other keys share the rest
    with pytest.raises(AssertionError, match=r"not by enough: its score leads every other by 4.60.*= 6.2") as failed:
        properties.check_copy(wrong(copy_query=lambda k, j: torch.log(torch.tensor(99.0)) * k[j]), orthonormal, 0, "")
    assert "longer" not in str(failed.value)
    with pytest.raises(AssertionError, match="the scores of a and b must be larger"):
        properties.check_average(wrong(average_query=lambda k, a, b: k[a] + k[b]), common.orthonormal(6, 6, 1), 0,
                                 1, 1, "")
    u = properties.kqv_vectors(6, 8.0, 4)
    u_a, u_b, u_c, u_d = u
    eye = torch.eye(6, dtype=torch.float64)
    query = (torch.outer(u_b, u_a) + torch.outer(u_c, u_d)) / 64.0
    value = torch.outer(u_b, u_b) - torch.outer(u_c, u_c) + torch.outer(u_c, u_d)
    hints = {"with V = I": eye, "flip the sign": (value + 2 * torch.outer(u_c, u_c)) / 64.0,
             "divide the outer products by |u|^2": value}
    for hint, V in hints.items():
        with pytest.raises(AssertionError, match=re.escape(hint)):
            properties.check_kqv(wrong(kqv_design=lambda u, V=V: (eye, query, V)), u, "")
    mu, sigmas = torch.zeros(2, 3, dtype=torch.float64), torch.stack([common.spd(3, 5), common.spd(3, 6)])
    noise = torch.randn(20_000, 2, 3, generator=common.generator(7), dtype=torch.float64)
    factors = torch.linalg.cholesky(sigmas)
    for hint, samples in {"matches sigma @ sigma": torch.einsum("nij,snj->sni", sigmas, noise),
                          "L^T L instead of L L^T": torch.einsum("nji,snj->sni", factors, noise)}.items():
        with pytest.raises(AssertionError, match=re.escape(hint)):
            properties.check_key_statistics(samples, mu, sigmas)
    properties.check_key_statistics(torch.einsum("nij,snj->sni", factors, noise), mu, sigmas)
