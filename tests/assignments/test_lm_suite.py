"""The lm suite: its bundled examples, its property checks (which need no reference) and the predictions route."""

from __future__ import annotations

import csv
import os

import pytest
from support.submissions import REPO

from autograder import cli, course
from autograder.grading import mutants, trusted_import
from autograder.suites.lm import common

LM = course.load("lm")
EXAMPLES = REPO / "examples" / "lm"
BLOCK = 32


@pytest.fixture(scope="module")
def reference():
    return trusted_import.load(LM.solution_dir, LM.modules)


def mutant(name: str):
    return next(m for m in mutants.catalog(LM) if m.name == name).implementation


def test_demo_grades_every_bundled_lm_example(tmp_path):
    """What `make demo` does for lm, without retraining: reference full marks, skeleton none, and the partly wrong
    student's feedback names each of its mistakes."""
    assert cli.main(["grade", str(EXAMPLES), "--out", str(tmp_path), "--jobs", "2", "--quiet",
                     "--skip-tag", "retraining"]) == 0
    rows = {row["submission"]: row for row in csv.DictReader(open(tmp_path / "gradebook.csv"))}
    assert set(rows) == {"reference", "skeleton", "partly_wrong"}
    assert rows["reference"]["score"] == rows["reference"]["max_score"]
    assert float(rows["skeleton"]["score"]) == 0
    assert 0.5 * float(rows["partly_wrong"]["max_score"]) < float(rows["partly_wrong"]["score"]) < float(
        rows["partly_wrong"]["max_score"])
    feedback = (tmp_path / "partly_wrong" / "feedback.md").read_text()
    for mistake in ("no masked span ever reaches n // 2 characters",
                    "The learning-rate warm-up is skipped", "strip() both sides before comparing",
                    "vanilla.dev.predictions has 500 lines for the 437 questions"):
        assert mistake in feedback, mistake


def _examples(impl, seed: int, draws: int = 12):
    text = common.corpus(seed)
    documents = [line for line in text.split("\n") if line.strip()]
    data = impl.dataset.CharCorruptionDataset(text, BLOCK, seed=seed)
    return common.collect_examples(data, documents, draws), documents


@pytest.mark.parametrize("name, check, message", [
    ("span_fixed_length", lambda e, d: common.assert_spans(e), "ever reaches n // 2"),
    ("span_drawn_from_middle", lambda e, d: common.assert_spans(e), "ever reaches n // 2"),
    ("truncation_off_by_one", lambda e, d: common.assert_truncation(e, d, BLOCK), "off by one"),
    ("no_random_truncation", lambda e, d: common.assert_truncation(e, d, BLOCK), "must be random"),
])
def test_dataset_properties_catch_mistakes_without_the_reference(reference, name, check, message):
    """Each property check passes on the reference and fails on a known mistake, on several corpora."""
    for seed in (1, 2, 3):
        examples, documents = _examples(reference, seed)
        common.assert_layout(examples, documents)
        check(examples, documents)
        wrong, documents = _examples(mutant(name), seed)
        with pytest.raises(AssertionError, match=message):
            check(wrong, documents)


def test_mask_written_once_is_named(reference):
    with pytest.raises(AssertionError, match="holds the mask character only once"):
        _examples(mutant("mask_inserted_once"), 1, draws=1)


@pytest.mark.parametrize("name, error", [
    ("finetune_question_not_masked", "keeps the targets"),
    ("finetune_padded_past_block", "not block_size \\+ 1"),
    ("finetune_keeps_non_ascii", "keeps the non-ASCII characters"),
])
def test_finetune_check_names_each_rule(reference, name, error):
    """assert_finetune_item passes the reference and tells each finetuning mistake by its rule."""
    pairs = [("Where was Zo\u00eb born?", "Ulm")]
    text = "".join(f"{q}\t{a}\n" for q, a in pairs)
    for impl, message in ((reference, None), (mutant(name), error)):
        vocab = impl.dataset.Vocabulary(text)
        x, y = impl.dataset.NameDataset(pairs, vocab, BLOCK)[0]
        if message is None:
            common.assert_finetune_item(x, y, *pairs[0], vocab.itos, BLOCK)
        else:
            with pytest.raises(AssertionError, match=message):
                common.assert_finetune_item(x, y, *pairs[0], vocab.itos, BLOCK)


def test_predictions_are_read_as_plain_files_only(tmp_path):
    """A link (to the hidden labels, say) planted by the student's code is refused, never followed; a folder or a pipe
    of that name is the student's mistake, named, and never the grader's (IsADirectoryError before)."""
    labels = tmp_path / "labels.tsv"
    labels.write_text("Where was A born?\tUlm\n")
    (tmp_path / "plain.predictions").write_text("Ulm\n")
    os.symlink(labels, tmp_path / "link.predictions")
    assert common.read_plain_text(tmp_path / "plain.predictions") == "Ulm\n"
    with pytest.raises(AssertionError, match="cannot be read"):
        common.read_plain_text(tmp_path / "link.predictions")
    (tmp_path / "folder.predictions").mkdir()
    os.mkfifo(tmp_path / "pipe.predictions")
    for name, kind in (("folder.predictions", "a folder"), ("pipe.predictions", "not a plain file")):
        with pytest.raises(AssertionError, match=f"{name} is {kind}: hand in the text file that run.py evaluate"):
            common.read_plain_text(tmp_path / name)


def test_predictions_threshold_is_clearly_above_the_baseline():
    labels = ["Ulm"] * 20 + [f"town {i}" for i in range(380)]
    assert common.baseline_threshold(labels, "Ulm") == pytest.approx(0.05 + 2 * (0.05 * 0.95 / 400) ** 0.5)


def _float32_loss(tmp_path):
    """The reference with its loss computed in float32 whatever the model's dtype (the handout allows either)."""
    folder = tmp_path / "float32_loss"
    folder.mkdir()
    for name in LM.files:
        (folder / name).write_text((LM.solution_dir / name).read_text())
    model = folder / "model.py"
    source = model.read_text()
    assert "flat.to(torch.promote_types(flat.dtype, torch.float32))" in source
    model.write_text(source.replace("flat.to(torch.promote_types(flat.dtype, torch.float32))", "flat.float()"))
    return trusted_import.load(folder, LM.modules)


def _after_steps(impl, state, batches, shape, variant, **schedule):
    model = common.gpt(impl, shape, variant, state, train=True)
    stepper = common.trainer(impl, model, **schedule)
    for x, y in batches:
        stepper.step(x, y)
    return model.state_dict()


def _distance(a: dict, b: dict) -> float:
    return max(float((a[name] - b[name]).abs().max()) for name in a)


def test_training_step_checks_hold_for_a_float32_loss_and_catch_the_mistakes(reference, tmp_path):
    """The parameters-after-steps checks (public inputs, and hidden draws from 12 secrets) leave a correct trainer that
    computes its loss in float32 well inside the tolerance, on inputs whose gradients are well away from zero, and
    the trainer mistakes well outside it."""
    from autograder.suites.lm.hidden import test_hidden
    from autograder.suites.lm.public import test_3_trainer

    float32_loss = _float32_loss(tmp_path)
    wrong = {name: mutant(name) for name in ("warmup_skipped", "weight_decay_everywhere", "loss_on_pad_targets")}
    state, x, y = test_3_trainer.step_inputs()
    cases = [(state, [(x, y)] * 2, test_3_trainer.SHAPE, "vanilla",
              dict(weight_decay=0.3, grad_norm_clip=1.0, **test_3_trainer.SCHEDULE), test_3_trainer.MOVED)]
    shape = test_hidden.UNSEEN_STEP_SHAPE
    for secret in range(12):
        state, batches, schedule = test_hidden.unseen_step_inputs(reference, secret)
        cases.append((state, batches, shape, "rope", schedule, 3 * schedule["learning_rate"]))
    for state, batches, shape, variant, schedule, moved in cases:
        gradients = common.step_gradients(reference, shape, variant, state, batches, **schedule)
        assert common.adam_conditioned(gradients)
        expected = _after_steps(reference, state, batches, shape, variant, **schedule)
        tolerance = common.STEP_TOLERANCE * moved
        assert _distance(_after_steps(float32_loss, state, batches, shape, variant, **schedule), expected) \
            < tolerance / 10
        for name, impl in wrong.items():
            assert _distance(_after_steps(impl, state, batches, shape, variant, **schedule), expected) \
                > 10 * tolerance, name


def test_a_missing_predictions_file_scores_zero_of_the_same_maximum(tmp_path):
    """The maximum is the assignment's whatever a submission holds: without a predictions file the test fails (0 of
    its points, never 0 of 0) and says what to hand in; the reference's file earns the points."""
    from types import SimpleNamespace

    from autograder.grading import Parts
    from autograder.suites.lm.hidden import test_predictions

    raised = None
    try:
        test_predictions.test_predictions_files(SimpleNamespace(root=tmp_path), Parts())
    except BaseException as exc:  # noqa: B036 - pytest's skip is not an Exception, and must be told apart
        raised = exc
    assert isinstance(raised, AssertionError), f"a missing file fails the test, not {raised!r}"
    assert "No *.predictions file was handed in" in str(raised) and "autograder zip lm" in str(raised)
    parts = Parts()
    test_predictions.test_predictions_files(SimpleNamespace(root=LM.solution_dir), parts)
    assert parts.used and parts.all_passed, parts.summary()

