"""The lm retraining test believes nothing the student's process says: forged training earns nothing, and forged
weights get a clear failure. Each submission is the reference with its training replaced, graded by the hidden
retraining test alone (its training takes no time, so neither does grading it); and the reference itself keeps full
marks when the machine gets oversubscribed after the grader measured it (the budgets count CPU time)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
import torch
from support.catalogue import load
from support.lm import reference, retrain

from autograder.batch.runners import OPENMP
from autograder.grading import Parts, StudentCodeFailure
from autograder.suites.lm import evaluation, gates
from autograder.suites.lm.hidden import test_retraining

# The catalogue's attacks on the retraining (tests/hostile/lm/, graded with namespaces by test_hostile_catalogue): one trains
# nothing and looks the answers up (the retraining test once read its own summary, asked its own complete and predict,
# and gave it 6/6); the other hands back NaN weights after pretraining, a state_dict of the wrong shapes after
# finetuning from scratch.
ATTACKS = {case.name: case.code for case in load() if case.assignment == "lm"}
MEMORISES, FORGES_WEIGHTS = ATTACKS["memorise_instead_of_training"], ATTACKS["forge_weights"]


@pytest.fixture
def calibrated(monkeypatch):
    """The budgets as measured with the sweep: how fast this machine trains is not what these tests check, and timing
    the reference's training step costs seconds."""
    monkeypatch.setattr(gates, "calibration_seconds", lambda *args: gates.load().budget.calibration)


def failures(parts: Parts) -> list[str]:
    return [error for _, _, error in parts.results if error is not None]


@pytest.mark.usefixtures("calibrated")
def test_a_submission_that_trains_nothing_earns_nothing_from_forged_figures():
    parts = retrain(MEMORISES)
    assert [weight for _, weight, _ in parts.results] == [3, 1, 2]
    cloze, loss, scratch = failures(parts)
    assert "gave the birthplace for 0%" in cloze
    assert "evaluated by the grader on the weights your pretraining produced, was 4." in loss, loss
    assert "answered 0% of its own finetuning questions" in scratch


@pytest.mark.usefixtures("calibrated")
def test_forged_weights_fail_clearly():
    parts = retrain(FORGES_WEIGHTS)
    details = failures(parts)[0]
    assert len(failures(parts)) == 3 and not parts.grader_errors
    assert "Pretraining, the cloze probe, finetuning and held-out predictions failed: the trained model's weights " \
           "cannot be graded: tok_emb.weight holds NaN or infinite values" in details
    assert "Finetuning without pretraining failed: the trained model's weights cannot be graded: head.weight is a " \
           "torch.float32 tensor of shape (" in details


def test_the_reference_keeps_full_marks_when_load_arrives_after_the_calibration(monkeypatch):
    """The reference's retraining on a secret world, with twice as many CPU hogs as cores started right after the
    grader's calibration step, for 30 s (bench/oversubscribed.py keeps them to the end, ten times over). The budgets
    count the worker's CPU time, which the hogs do not add to, so the reference keeps 6/6; with the budgets in
    wall-clock time, set from the calibration, such load cost it the finetune-only part. The one real retraining of
    the tests: about a minute of 2 cores, and 30 s of the hogs'."""
    for name, value in OPENMP.items():  # as every grading's runners and workers
        monkeypatch.setenv(name, value)
    parts = retrain(seed=11, hogs=2 * (os.cpu_count() or 1), hog_seconds=30)
    assert failures(parts) == [] and not parts.grader_errors, failures(parts) + parts.grader_errors
    assert [weight for _, weight, _ in parts.results] == [3, 1, 2]


@pytest.fixture(scope="module")
def expected() -> dict[str, torch.Tensor]:
    return reference().run.build_model("vanilla", 12, "cpu").state_dict()


@pytest.mark.parametrize(("change", "problem"), [
    (lambda s: list(s.values()), "state_dict() returned a list, not a dict of tensors"),
    (lambda s: {k: v for k, v in s.items() if k != "ln_f.bias"}, "names differ from the handout's: missing ln_f.bias"),
    (lambda s: {**s, "blocks.0.attn.mask": torch.ones(3)}, "unexpected blocks.0.attn.mask"),
    (lambda s: {**s, "ln_f.bias": 0.0}, "ln_f.bias is a float, not a tensor"),
    (lambda s: {**s, "ln_f.bias": s["ln_f.bias"].double()}, "ln_f.bias is a torch.float64 tensor of shape (128,)"),
    (lambda s: {**s, "ln_f.bias": s["ln_f.bias"][:-1]}, "ln_f.bias is a torch.float32 tensor of shape (127,)"),
    (lambda s: {**s, "ln_f.bias": s["ln_f.bias"] / 0}, "ln_f.bias holds NaN or infinite values"),
])
def test_weights_that_do_not_fit_the_handouts_model_are_refused(expected, change, problem):
    with pytest.raises(StudentCodeFailure, match="cannot be graded") as refused:
        evaluation.checked_state(change(dict(expected)), expected)
    assert problem in str(refused.value)
    assert evaluation.checked_state(dict(expected), expected) == expected


def test_a_model_that_stays_out_of_reach_is_refused():
    """build_model must return a model (an object that stays in the worker), not a value the grader receives."""
    retraining = test_retraining.Retraining(SimpleNamespace(excuse=lambda seconds: None), reference(), None, "ab\n",
                                            0, None)
    with pytest.raises(StudentCodeFailure, match="build_model returned a dict, not a model"), \
            retraining.trained({"tok_emb.weight": torch.ones(2)}):
        pass


def test_reading_weights_back_leaves_the_global_generator_alone(expected):
    """build_model seeds torch's global generator: the grader's copy of a student's model must not reseed the
    runner's."""
    torch.manual_seed(5)
    drawn = torch.rand(3)
    torch.manual_seed(5)
    evaluation.trained_model(reference(), dict(expected), "vanilla", 12, "cpu")
    assert torch.equal(torch.rand(3), drawn)
