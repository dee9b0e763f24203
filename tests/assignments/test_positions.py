"""The positions assignment: its bundled examples, the public checks in a student's set-up, and the property
checks of its suite, which must catch mistakes without the reference."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys

import pytest
import torch
from support.submissions import REPO

from autograder import cli, course
from autograder.grading import mutants, trusted_import
from autograder.suites.positions import common

POSITIONS = course.load("positions")
EXAMPLES = REPO / "examples" / "positions"


@pytest.fixture(scope="module")
def reference():
    return trusted_import.load(POSITIONS.solution_dir, POSITIONS.modules)


def mutant(name: str):
    return next(m for m in mutants.catalog(POSITIONS) if m.name == name).implementation


def test_demo_grades_every_bundled_positions_example(tmp_path):
    """What `make demo` does for positions: reference and a correct student full marks, skeleton none, and the
    partly wrong student gets fingerprints for both their positions.py and their carried masking.py."""
    assert cli.main(["grade", str(EXAMPLES), "--out", str(tmp_path), "--jobs", "2", "--quiet"]) == 0
    rows = {row["submission"]: row for row in csv.DictReader(open(tmp_path / "gradebook.csv"))}
    assert set(rows) == {"reference", "skeleton", "correct", "partly_wrong"}
    assert {row["assignment"] for row in rows.values()} == {"positions"}
    for name in ("reference", "correct"):
        assert rows[name]["score"] == rows[name]["max_score"], name
    assert float(rows["skeleton"]["score"]) == 0
    assert 0 < float(rows["partly_wrong"]["score"]) < 0.75 * float(rows["partly_wrong"]["max_score"])
    feedback = (tmp_path / "partly_wrong" / "feedback.md").read_text()
    for mistake in ("Sinusoidal embeddings with sin and cos swapped", "RoPE rotates the two halves",
                    "in your masking.py (from the masking assignment): The padding mask is off by one",
                    "Note: this test builds on your masking.py from the masking assignment"):
        assert mistake in feedback, mistake
    assert "Your masking.py fails some of its own checks" in feedback
    answers = list(csv.DictReader(open(tmp_path / "manual_answers.csv")))
    correct = {row["question"]: row["answer"] for row in answers if row["submission"] == "correct"}
    assert set(correct) == {"equivariance_proof", "why_order_matters", "what_the_plots_show"}
    assert all(correct.values()) and "dog bites man" in correct["why_order_matters"]


def test_public_checks_run_in_a_students_set_up(tmp_path):
    """A copy of the harness without hidden suites, solutions or mutants: check replays the recorded values, the
    carried masking checks included."""
    dist = tmp_path / "dist"
    shutil.copytree(REPO / "autograder", dist / "autograder", ignore=shutil.ignore_patterns("hidden", "__pycache__"))
    work = shutil.copytree(EXAMPLES / "correct", tmp_path / "work")
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "check", "positions", str(work)], cwd=dist,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Score: 40 / 40" in run.stdout and "[FAIL]" not in run.stdout


def test_missing_carried_masking_is_explained(tmp_path):
    work = shutil.copytree(EXAMPLES / "correct", tmp_path / "work")
    (work / "masking.py").unlink()
    # refused as handed in (a required file is missing): listed as not graded, exit status 1
    assert cli.main(["grade", str(work), "--out", str(tmp_path / "out"), "--quiet"]) == 1
    feedback = (tmp_path / "out" / "work" / "feedback.md").read_text()
    assert "masking.py is your file from the masking assignment, which this one builds on: copy it" in feedback


def test_the_permutation_used_by_the_suite_moves_every_token():
    for T in range(2, 12):
        perm = common.permutation(T, seed=T)
        assert sorted(perm.tolist()) == list(range(T)) and not (perm == torch.arange(T)).any()


@pytest.mark.parametrize("name, check", [
    ("rope_ignores_positions", lambda p, x, table: common.assert_decode_matches(p, x, table, steps=(3,))),
    ("rope_positions_from_one", lambda p, x, table: common.assert_decode_matches(p, x, table, steps=(0,))),
    ("attention_ffn_causal", lambda p, x, table: common.assert_equivariant(
        p, x, common.permutation(x.shape[-2], 1), common.ffn_weights(x.shape[-1], 6, seed=1, dtype=x.dtype))),
    ("sinusoidal_sin_cos_swapped", lambda p, x, table: common.assert_shift_property(p, 6, 2, 8)),
    ("sinusoidal_exponent_i_over_d", lambda p, x, table: common.assert_shift_property(p, 6, 2, 8)),
    ("shift_operator_transposed", lambda p, x, table: common.assert_shift_property(p, 6, 2, 8)),
])
def test_property_checks_catch_mistakes_without_the_reference(reference, name, check):
    """Each property check passes on the reference and fails on a known mistake (it needs no expected values)."""
    x = common.vectors((2, 5, 8), seed=3, dtype=torch.float64)
    table = common.angle_table(8, 16, seed=3)
    check(reference.positions, x, table)
    with pytest.raises(AssertionError):
        check(mutant(name).positions, x, table)


def test_rope_property_checks_pass_on_the_reference_and_fail_without_rotation(reference):
    x = common.vectors((2, 3, 6, 4), seed=5, dtype=torch.float64)
    table = common.angle_table(4, 16, seed=5)
    common.assert_norms_preserved(reference.positions, x, table)
    common.assert_identity_at_zero(reference.positions, x, table)
    common.assert_relative(reference.positions, x[0, 0, 0], x[1, 2, 3], table, shifts=(2, 5))

    class NoRotation:
        @staticmethod
        def apply_rope(x, freqs, positions=None):
            return x.clone()

    with pytest.raises(AssertionError, match="does not rotate"):
        common.assert_relative(NoRotation, x[0, 0, 0], x[1, 2, 3], table, shifts=(2,))
