"""trainer.py: the learning-rate schedule, AdamW's parameter groups, and one training step."""

import torch

from autograder.grading import assert_close, graded, read
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape

# Recording (autograder build) computes every known mistake's values within the test's time limit.
RECORDING_TIMEOUT = 180
SHAPE = Shape(vocab_size=9, block_size=8, n_layer=1, n_embd=4)  # small: recorded for every known mistake
TOLERANCE = dict(rtol=1e-6, atol=1e-12)
SCHEDULE = dict(learning_rate=6e-3, lr_decay=True, warmup_tokens=1000, final_tokens=11000)


@graded(points=2, timeout=RECORDING_TIMEOUT, covers=["learning_rate"])
def test_learning_rate(student, oracle, parts):
    """learning_rate: linear warm-up, then a cosine floored at 10 % whose progress goes on past final_tokens"""
    token_counts = [0, 1, 250, 999, 1000, 1001, 3500, 6000, 9000, 10999, 11000, 12000, 16000, 21000, 50000]

    def run(impl, lr_decay=True):
        config = impl.trainer.TrainerConfig(**{**SCHEDULE, "lr_decay": lr_decay})
        return [float(impl.trainer.learning_rate(t, config)) for t in token_counts]

    got, expected = run(student), oracle(run)
    with parts("warm-up (the first 1000 tokens)"):
        assert_close(got[:4], expected[:4], "the rate during warm-up (it rises linearly from 0)", **TOLERANCE)
    with parts("cosine decay and its 10 % floor", 2):
        assert_close(got[4:11], expected[4:11], f"the rate after warm-up at tokens {token_counts[4:11]}", **TOLERANCE)
    with parts("past final_tokens (progress is not capped at 1)"):
        assert_close(got[11:], expected[11:], f"the rate past final_tokens at tokens {token_counts[11:]} (the cosine "
                     "of progress = (tokens - warmup_tokens) / (final_tokens - warmup_tokens) climbs again after 1, "
                     "as in minGPT and CS224N)", **TOLERANCE)
    with parts("lr_decay=False"):
        assert_close(run(student, False), [6e-3] * len(token_counts), "the rate with lr_decay=False", **TOLERANCE)


@graded(points=1, timeout=RECORDING_TIMEOUT, covers=["configure_optimizer"])
def test_weight_decay_groups(student, parts):
    """configure_optimizer: weight decay on matrices only (two AdamW groups)"""
    names = common.parameter_names(SHAPE, "vanilla")
    matrices = {n for n in names if n.endswith("weight") and not any(k in n for k in ("ln1", "ln2", "ln_f"))}
    model = common.gpt(student, SHAPE, "vanilla", common.gpt_state(SHAPE, "vanilla", seed=90))
    config = student.trainer.TrainerConfig(weight_decay=0.25, learning_rate=1e-3)
    optimizer = student.trainer.configure_optimizer(model, config)
    groups = common.value(optimizer.param_groups)
    assert isinstance(groups, list) and len(groups) == 2, (
        f"the optimiser has {len(groups)} parameter groups; make two: the matrices (decayed) and the rest (not)")
    sizes = [group["weight_decay"] for group in groups]
    with parts("the groups' weight decay"):
        assert sizes == [0.25, 0.0], (f"the two groups have weight_decay {sizes}; param_groups[0] decays with "
                                      "config.weight_decay and param_groups[1] not at all")
    with parts("which parameters decay"):
        counts = [len(group["params"]) for group in groups]
        assert counts == [len(matrices), len(names) - len(matrices)], (
            f"the groups hold {counts[0]} and {counts[1]} parameters; expected the {len(matrices)} matrices "
            f"(2 or more dimensions) in the first and the {len(names) - len(matrices)} biases and LayerNorm gains "
            "in the second: weight decay must not apply to biases and gains")


def _step(impl, state, x, y, clip=1.0, steps=1):
    model = common.gpt(impl, SHAPE, "vanilla", state, train=True)
    trainer = common.trainer(impl, model, weight_decay=0.3, grad_norm_clip=clip, **SCHEDULE)
    losses = [trainer.step(x, y) for _ in range(steps)]
    return (losses, model.state_dict(), read(trainer, "tokens"), common.value(trainer.optimizer.param_groups)[0]["lr"],
            common.grad_norm(model, common.parameter_names(SHAPE, "vanilla")))


# The training step's inputs: every gradient of the two steps is well away from zero (common.adam_conditioned, which
# tests/assignments/test_lm_suite.py asserts for these seeds), so the parameters after the steps are decided by the
# trainer, not by rounding. The steps are 24 and 48 tokens into the warm-up: their rates bound how far AdamW moves a
# parameter.
STEP_SEEDS = (91, 92)
STEP_BATCH = (4, 6)
TOKENS_PER_STEP = STEP_BATCH[0] * STEP_BATCH[1]
MOVED = sum(SCHEDULE["learning_rate"] * step * TOKENS_PER_STEP / SCHEDULE["warmup_tokens"] for step in (1, 2))


def step_inputs() -> tuple[dict, torch.Tensor, torch.Tensor]:
    """test_training_step's float64 initial state and its batch (x, y)."""
    state = common.gpt_state(SHAPE, "vanilla", seed=STEP_SEEDS[0], dtype=torch.float64)
    x = common.tokens(*STEP_BATCH, SHAPE.vocab_size, seed=STEP_SEEDS[1])
    return state, x, common.targets(*STEP_BATCH, SHAPE.vocab_size, seed=STEP_SEEDS[1])


@graded(points=3, timeout=RECORDING_TIMEOUT, covers=["Trainer.step", "configure_optimizer", "learning_rate", "GPT"])
def test_training_step(student, oracle, parts):
    """Trainer.step: loss, token count, learning rate and parameters after two AdamW steps match the reference"""
    state, x, y = step_inputs()

    def run(impl):
        return _step(impl, state, x, y, steps=2)

    got, expected = run(student), oracle(run)
    with parts("the losses returned"):
        for index in range(2):
            common.assert_loss(got[0][index], expected[0][index], f"the loss of step {index + 1}")
    with parts("tokens counted and the rate set"):
        assert got[2] == 2 * 4 * 6, f"after two steps of 4 x 6 tokens, trainer.tokens is {got[2]}, expected 48"
        assert_close(float(got[3]), expected.value[3], "the learning rate of the second step (that of the tokens "
                     "counted so far, this batch included)", rtol=1e-9, atol=1e-12)
    with parts("parameters after the steps", 2):
        common.assert_state_close(got[1], expected[1], "after two steps", MOVED)


@graded(points=1, timeout=RECORDING_TIMEOUT, covers=["Trainer.step"])
def test_gradient_clipping(student):
    """Trainer.step: gradients are clipped to grad_norm_clip before the optimiser step"""
    state = common.gpt_state(SHAPE, "vanilla", seed=97, dtype=torch.float64)
    x = common.tokens(4, 6, SHAPE.vocab_size, seed=98)
    y = common.targets(4, 6, SHAPE.vocab_size, seed=98)
    norm = _step(student, state, x, y, clip=0.05)[4]
    assert abs(norm - 0.05) < 1e-6, (
        f"after a step with grad_norm_clip=0.05 the gradients' total norm is {norm:.4g}; clip them with "
        "torch.nn.utils.clip_grad_norm_ after backward and before the optimiser step")
