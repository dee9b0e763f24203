"""Hidden tests of stated rules that the value tests let through: decode keeps pads, the rope variant uses the
configured base, generate stops as soon as every row has stopped, the optimiser's groups keep the model's order, and
a step counts the tokens of its items before cropping.
"""

from dataclasses import asdict

import torch

from autograder.grading import assert_close, assert_tensor, graded, read
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape

SHAPE = Shape(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=8)


@graded(points=1, covers=["Vocabulary"])
def test_decode_keeps_pads_and_masks(student, seed):
    """Vocabulary.decode: every id becomes its character, pads and masks included"""
    vocab = student.dataset.Vocabulary(common.corpus(seed))
    itos = read(vocab, "itos")
    ids = [2, 0, 1, 3, 0, 0] if len(itos) > 3 else [0, 1, 0]
    got = vocab.decode(torch.tensor(ids))
    expected = "".join(itos[i] for i in ids)
    assert got == expected, (f"decode({ids}) gave {got!r}, expected {expected!r}: pads (id 0) and masks (id 1) are "
                             "characters too (the docstring: pads and masks included)")


@graded(points=1, covers=["GPT", "Block", "RotaryCausalSelfAttention"], builds_on=["masking", "positions"])
def test_rope_base_is_used(student, oracle, seed):
    """GPT (rope): the configured rope_base reaches every block's rotary attention"""
    base = 40.0 + seed % 50
    state = common.gpt_state(SHAPE, "rope", seed, torch.float64)
    x = common.tokens(2, SHAPE.block_size, SHAPE.vocab_size, seed)

    def run(impl):
        config = impl.model.GPTConfig(**asdict(SHAPE), dropout=0.0, variant="rope", rope_base=base)
        model = impl.model.GPT(config)
        model.double()
        model.load_state_dict(state)
        model.eval()
        return model(x)[0]

    got = run(student)
    assert_tensor(got, "the logits", shape=(2, SHAPE.block_size, SHAPE.vocab_size), dtype=torch.float64)
    assert_close(got, oracle(run), f"the logits of a rope GPT with rope_base={base:g} (pass config.rope_base to "
                 "RotaryCausalSelfAttention as its base)")


def _staggered_stop(reference, seed: int) -> tuple[dict, torch.Tensor, int]:
    """Weights, 3 prompts and a stop id that every row generates within 7 of 8 greedy steps, where at the step the last
    row first produces it another row produces something else: the rows stop at different steps, before the last, so
    only flags kept from step to step stop the batch there."""
    for draw in range(100):
        state = common.gpt_state(SHAPE, "rope", seed + draw, torch.float64)
        prompt = common.tokens(3, 2, SHAPE.vocab_size, seed + draw)
        free = common.gpt(reference, SHAPE, "rope", state).generate(prompt, 8)[:, 2:]
        for stop in sorted(set(free[0].tolist())):
            hits = free == stop
            if bool(hits.any(dim=1).all()):
                last = int(hits.int().argmax(dim=1).max())
                if last < free.shape[1] - 1 and not bool(hits[:, last].all()):
                    return state, prompt, stop
    raise RuntimeError("no draw of weights gives rows that stop at different steps")  # a grader problem


@graded(points=1, covers=["GPT.generate"], builds_on=["masking", "positions"])
def test_generate_stops_when_every_row_has_stopped(student, reference, oracle, seed):
    """GPT.generate: with stop_id it stops at the first step after which every row has produced it"""
    state, prompt, stop = _staggered_stop(reference, seed)

    def run(impl):
        return common.gpt(impl, SHAPE, "rope", state).generate(prompt, 8, stop_id=stop)

    got, expected = run(student), oracle(run)
    n = expected.value.shape[1]
    assert_tensor(got, "generate(idx, 8, stop_id)", dtype=torch.int64)
    assert tuple(got.shape) == (3, n), (
        f"generate(idx, 8, stop_id) returned shape {tuple(got.shape)}; every row has produced stop_id after {n - 2} "
        f"tokens (the rows at different steps), so it returns (3, {n}): keep a flag per row that stays set once the "
        "row has produced stop_id, and stop when all are set")
    assert_close(got, expected, "the generated ids")


@graded(points=1, covers=["configure_optimizer"])
def test_optimizer_groups_in_model_order(student, seed):
    """configure_optimizer: each group holds its parameters in model.named_parameters() order"""
    state = common.gpt_state(SHAPE, "vanilla", seed)
    model = common.gpt(student, SHAPE, "vanilla", state)
    optimizer = student.trainer.configure_optimizer(model, student.trainer.TrainerConfig(weight_decay=0.1))
    groups = common.value(optimizer.param_groups)
    assert isinstance(groups, list) and len(groups) == 2, "make two parameter groups: matrices, then the rest"
    order = model.state_dict()  # the student's model's own order, which a correct model may register differently
    assert isinstance(order, dict), f"state_dict() returned {type(order).__name__}, expected a dict"
    for index, wanted in enumerate((lambda t: t.dim() >= 2, lambda t: t.dim() < 2)):
        names = [name for name in order if name in state and wanted(state[name])]
        params = groups[index]["params"]
        assert len(params) == len(names) and all(
            isinstance(p, torch.Tensor) and p.shape == state[n].shape and torch.equal(p, state[n])
            for p, n in zip(params, names, strict=False)), (
            f"param_groups[{index}] does not hold {', '.join(names[:4])}, ... in model.named_parameters() order: a "
            "checkpoint's optimiser state (one entry per parameter, by position) would then load into the wrong "
            "parameters; build each group by walking model.named_parameters() once")


@graded(points=1, covers=["Trainer.step"])
def test_tokens_count_items_before_cropping(student, seed):
    """Trainer: a cropped batch counts B * the items' length (pads too), not the cropped length"""
    T = 8
    items = []
    for index, length in enumerate((3, 3, 5 + seed % 3, 5 + seed % 3)):
        x = common.tokens(1, T, SHAPE.vocab_size, seed + index)[0]
        x[length:] = 0
        items.append((x, x.clone()))
    model = common.gpt(student, SHAPE, "vanilla", common.gpt_state(SHAPE, "vanilla", seed))
    trainer = student.trainer.Trainer(model, items, None, student.trainer.TrainerConfig(
        max_epochs=1, batch_size=2, learning_rate=1e-3, device="cpu", autocast="off", progress=False))
    trainer.train()
    tokens = read(trainer, "tokens")
    assert tokens == len(items) * T, (
        f"after one epoch of {len(items)} items of length {T}, in batches cropped to their longest item, "
        f"trainer.tokens is {tokens}, expected {len(items) * T}: count B * self.item_length (the length before "
        "cropping), not the cropped batch's size")

# autograder-hidden-canary-7d3e9a (never ships to students)
