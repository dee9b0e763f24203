"""The retraining's figures, computed by trusted code from the weights a training produced.

A student's process can say anything about itself: a summary with a low loss, a ``complete`` or ``predict`` that
looks the answers up in the texts its ``pretrain`` and ``finetune`` were given. So nothing it says is believed. The
one thing read from it is ``model.state_dict()``, checked here against the reference's own GPT of the same shape
(the same keys, each a tensor of the same shape and dtype, every value finite) and loaded into that GPT, where the
reference's own code measures the loss, the cloze probe and the answers (lm's model.py fixes the parameter names,
so state dicts are interchangeable). Weights are data: a submission can only reach these figures by training a
model that reaches them. bench/cpu_tier.py measures the reference's figures for the gates through these same
functions, so the gates and the grading mean the same thing.
"""

from __future__ import annotations

import contextlib
import random
import statistics
from collections.abc import Iterator
from typing import NoReturn

import torch

from autograder.grading import StudentCodeFailure
from autograder.suites.lm.birthplaces import cloze_match, exact_match

# Fresh corruptions of every document drawn for the loss: the trainer's summary averages the last epoch's steps, a
# few batches on the retraining's world; several draws of the same kind of epoch make the figure steadier.
LOSS_EPOCHS = 4
SHOWN = 3  # names listed of a set that differs


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one thread inside the block. The evaluation is many small forward passes (greedy generation one
    character at a time): a second thread only adds synchronisation, and when other processes share the cores
    OpenMP threads wait for each other at every operation, which made the evaluation ten times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def trained_model(impl, state, variant: str, vocab_size: int, preset: str):
    """``impl``'s (the reference's) GPT of the preset's shape holding ``state``, the trained model's
    ``state_dict()``, in eval mode; a ``StudentCodeFailure`` that says what is wrong when ``state`` does not fit.
    torch's global generator is left as it was (build_model seeds it)."""
    with torch.random.fork_rng(devices=[]):
        model = impl.run.build_model(variant, vocab_size, preset, seed=0)
    model.load_state_dict(checked_state(state, model.state_dict()))
    return model.eval()


def checked_state(state, expected: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``state`` when it holds exactly ``expected``'s names, each a tensor of its shape and dtype with finite values;
    else a ``StudentCodeFailure`` naming the first problem."""
    if not isinstance(state, dict):
        _refuse(f"state_dict() returned a {type(state).__name__}, not a dict of tensors")
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        _refuse("its names differ from the handout's: " + "; ".join(
            f"{what} {', '.join(names[:SHOWN])}{' ...' if len(names) > SHOWN else ''}"
            for what, names in (("missing", missing), ("unexpected", extra)) if names))
    for name, want in expected.items():
        got = state[name]
        if not isinstance(got, torch.Tensor):
            _refuse(f"{name} is a {type(got).__name__}, not a tensor")
        if got.dtype != want.dtype or got.shape != want.shape:
            _refuse(f"{name} is a {got.dtype} tensor of shape {tuple(got.shape)}, where the handout's model has a "
                    f"{want.dtype} tensor of shape {tuple(want.shape)}")
        if not bool(torch.isfinite(got).all()):
            _refuse(f"{name} holds NaN or infinite values (did the training diverge?)")
    return state


def _refuse(problem: str) -> NoReturn:
    raise StudentCodeFailure(
        f"the trained model's weights cannot be graded: {problem}. The grader evaluates model.state_dict() in its "
        "own GPT, which needs the parameter names and shapes of model.py's docstring, float32 and finite.")


@torch.no_grad()
def pretraining_loss(impl, model, corpus: str, preset: str, seed: int) -> float:
    """The mean span-corruption loss of ``model`` on ``corpus``: LOSS_EPOCHS epochs of the reference's
    CharCorruptionDataset, batched as the reference's trainer batches an epoch, averaged over the batches as the
    trainer's summary averages its last epoch's steps (with the cpu preset's dropout of 0 the training mode changes
    nothing, so the figure differs from that summary only by the weights' drift over its last epoch and by which
    corruptions were drawn)."""
    shape = impl.run.get_preset(preset)
    dataset = impl.dataset.CharCorruptionDataset(corpus, shape.block_size, seed=seed)
    order = random.Random(seed)
    losses = [float(model(x, y)[1]) for _ in range(LOSS_EPOCHS)
              for x, y in impl.trainer.plan_batches(dataset, shape.pretrain_batch_size, order).batches]
    return statistics.mean(losses)


def cloze(impl, model, vocab, items: list[tuple[str, str]]) -> float:
    """The share of (prompt, birthplace) ``items`` whose greedy completion by the reference's ``complete`` starts with
    the birthplace (``birthplaces.cloze_match``)."""
    prompts, places = zip(*items, strict=True)
    return rate(cloze_match(impl.run.complete(model, vocab, list(prompts), max(map(len, places)) + 1), places))


def accuracy(impl, model, vocab, pairs: list[tuple[str, str]]) -> float:
    """The share of (question, answer) ``pairs`` that the reference's ``predict`` answers exactly."""
    return rate(exact_match(impl.run.predict(model, vocab, [q for q, _ in pairs]), [a for _, a in pairs]))


def rate(score: tuple[int, int]) -> float:
    return score[0] / score[1]
