"""The retraining gates as numbers: the derivation rule, the committed thresholds, and the parts they grade."""

from __future__ import annotations

import math
import tomllib

import pytest

from autograder import course
from autograder.suites.lm import gates
from autograder.suites.lm.world import SIZES

GATES = gates.Gates(cloze_min=0.6, scratch_train_acc_min=0.4, pretrain_loss_max=0.5)
REFERENCE_LIKE = {"cloze": 0.8, "pretrain_loss": 0.3, "scratch_train_acc": 0.7, "heldout_em": 0.03}


def passed(figures: dict) -> list[bool]:
    return [v.passed for v in gates.judge(figures, GATES)]


def test_a_run_like_the_reference_passes_every_part():
    verdicts = gates.judge(REFERENCE_LIKE, GATES)
    assert [v.passed for v in verdicts] == [True, True, True]
    assert [v.weight for v in verdicts] == [3, 1, 2]


@pytest.mark.parametrize(("changes", "expected"), [
    ({"cloze": 0.59}, [False, True, True]),            # pretraining did not store the facts
    ({"cloze": 0.6}, [True, True, True]),              # the gate itself passes
    ({"pretrain_loss": 0.51}, [True, False, True]),
    ({"pretrain_loss": math.nan}, [True, False, True]),
    ({"scratch_train_acc": 0.05}, [True, True, False]),  # finetuning does not learn
])
def test_each_gate_fails_only_its_part(changes, expected):
    assert passed({**REFERENCE_LIKE, **changes}) == expected


def test_a_stage_that_failed_fails_its_parts_and_says_so():
    verdicts = gates.judge({"scratch_train_acc": 0.7}, GATES)
    assert [v.passed for v in verdicts] == [False, False, True]
    assert all("not measured" in v.message for v in verdicts[:2])
    failing = gates.judge({**REFERENCE_LIKE, "cloze": 0.25}, GATES)[0]
    assert "25%" in failing.message and "60%" in failing.message


def test_rate_gate_is_the_low_end_of_a_wilson_interval_with_a_floor_above_the_majority():
    assert gates.rate_gate(0.8, 100, 3.0, 0.05) == 0.65
    assert gates.rate_gate(0.8, 400, 3.0, 0.05) == 0.73       # more people, a narrower margin
    assert gates.rate_gate(1.0, 64, 3.0, 0.05) == 0.87        # a perfect reference still leaves room
    assert gates.rate_gate(0.12, 100, 3.0, 0.05) == 0.16      # the floor: the majority's Wilson high end
    assert gates.rate_gate(0.10, 100, 0.0, 0.05) == 0.10


def test_wilson_interval_matches_a_worked_value():
    low, high = gates.wilson(0.5, 100, 2.0)  # centre 0.5, half-width 2 / 1.04 * sqrt(0.0025 + 0.0001)
    assert low == pytest.approx(0.5 - 0.0980580676, abs=1e-9) and high == pytest.approx(0.5 + 0.0980580676, abs=1e-9)


def test_derive_from_a_sweep():
    rows = [{"cloze": c, "scratch_train_acc": s, "pretrain_loss": loss, "majority_em": 0.05}
            for c, s, loss in [(0.7, 0.5, 0.30), (0.8, 0.6, 0.32), (0.9, 0.7, 0.34)]]
    derived = gates.derive(rows, heldout=100, train=100, z=3.0)
    assert derived == {"cloze_min": 0.55, "scratch_train_acc_min": 0.35, "pretrain_loss_max": 0.4}
    one_seed = gates.derive(rows[:1], heldout=100, train=100, z=3.0)
    assert one_seed["pretrain_loss_max"] == 0.39, "fewer than 3 seeds: 10 % of the mean loss stands in for the spread"


def test_the_committed_gates_follow_from_the_committed_sweep():
    """The committed gates ([retraining] in the lm assignment.toml) are never stricter than derive() of its own
    per-seed figures (an instructor may loosen one, with the reason in the file); the retraining fits the suite's
    limits."""
    data = tomllib.loads(gates.THRESHOLDS.read_text())["retraining"]
    world = data["world"]
    assert world["size"] in SIZES and [r["seed"] for r in data["sweep"]] == world["seeds"]
    size = SIZES[world["size"]]
    derived = gates.derive(data["sweep"], heldout=size["dev"], train=size["people"] - size["dev"] - size["test"],
                           z=data["gates"]["z"])
    committed = data["gates"]
    assert committed["cloze_min"] <= derived["cloze_min"]
    assert committed["scratch_train_acc_min"] <= derived["scratch_train_acc_min"]
    assert committed["pretrain_loss_max"] >= derived["pretrain_loss_max"]
    assert gates.load().gates.cloze_min > max(r["majority_em"] for r in data["sweep"])
    assert data["budget"]["calibration_s"] == min(r["calibration_s"] for r in data["sweep"])
    for stage in ("pretrain", "finetune", "scratch"):
        assert data["budget"][f"reference_{stage}_cpu_s"] >= max(r[f"{stage}_cpu_s"] for r in data["sweep"]) - 0.05
    lm = course.load("lm")
    slowest = gates.load().budget.scaled(gates.MAX_SLOWDOWN)  # on the slowest machine the budgets stretch to
    assert slowest.deadline < 0.75 * lm.submission_timeout, "room for every other test"
    assert slowest.training < lm.limits.cpu_seconds, "the worker's CPU-time limit allows the budget"


BUDGET = gates.Budget(pretrain=300, finetune=60, scratch=60, reference_pretrain=120, reference_finetune=1,
                      reference_scratch=10, calibration=0.2)


@pytest.mark.parametrize(("measured", "slowdown"), [
    (0.2, 1.0),    # the sweep's machine
    (0.1, 1.0),    # a faster machine keeps the measured budgets
    (0.3, 1.5),    # a slower one gets them stretched
    (0.54, 2.0),   # ... up to MAX_SLOWDOWN (a machine without AVX2 measured 2.7x slower)
])
def test_budgets_stretch_on_a_slower_machine(measured, slowdown):
    assert BUDGET.slowdown(measured) == pytest.approx(slowdown)
    scaled = BUDGET.scaled(BUDGET.slowdown(measured))
    assert scaled.pretrain == pytest.approx(300 * slowdown)
    assert scaled.reference_pretrain == pytest.approx(120 * slowdown)
    assert scaled.training == pytest.approx(420 * slowdown)
    assert scaled.deadline == pytest.approx(gates.WALL_FACTOR * 420 * slowdown + gates.SLACK_SECONDS)


def test_calibration_times_the_reference_training_step():
    from autograder.grading import trusted_import

    lm = course.load("lm")
    seconds = gates.calibration_seconds(trusted_import.load(lm.solution_dir, lm.modules), "cpu", "vanilla")
    assert 0.001 < seconds < 30
