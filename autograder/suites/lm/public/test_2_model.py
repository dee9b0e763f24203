"""model.py: the block, the GPT (vanilla and rope), its loss, and generation, with the reference's weights."""

import torch

from autograder.grading import assert_close, assert_tensor, forward_backward, graded, read, recognise
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape
from autograder.suites.positions.common import assert_raises_value_error

BLOCK_COVERS = ["Block", "CausalSelfAttention", "RotaryCausalSelfAttention"]
GPT_COVERS = ["GPT", *BLOCK_COVERS]
# Recording (autograder build) computes every known mistake's values within the test's time limit.
RECORDING_TIMEOUT = 180
SHAPE = Shape()
BLOCK_SHAPE = Shape(n_embd=4)  # small: every known mistake's gradients are recorded for the public checks


@graded(points=3, timeout=RECORDING_TIMEOUT, covers=BLOCK_COVERS, builds_on=["masking", "positions"])
def test_block(student, oracle, parts):
    """Block: output and gradients match the reference (vanilla and rope, float32 and float64)"""
    for variant, dtype in [("vanilla", torch.float32), ("rope", torch.float64)]:
        state = common.block_state(BLOCK_SHAPE.n_embd, seed=40, dtype=dtype)
        x = torch.randn(2, 5, BLOCK_SHAPE.n_embd, generator=common.generator(41), dtype=torch.float64).to(dtype)

        def run(impl, variant=variant, state=state, x=x):
            return forward_backward(common.block(impl, BLOCK_SHAPE, variant, state), x)

        with parts(f"{variant}, {dtype}"):
            got, expected = run(student), oracle(run)
            assert_tensor(got["output"], "the output", shape=tuple(x.shape), dtype=dtype)
            assert_close(got["output"], expected["output"], "the output")
            assert_close(got["input_grads"][0], expected["input_grads"][0], "the gradient of the input")
            for name in state:
                grad = got["param_grads"].get(name)
                assert grad is not None, f"{name} received no gradient: is it used in forward?"
                assert_close(grad, expected["param_grads"][name], f"the gradient of {name}")


@graded(points=4, timeout=RECORDING_TIMEOUT, covers=GPT_COVERS, builds_on=["masking", "positions"])
def test_gpt_logits_and_loss(student, oracle, parts):
    """GPT: logits and loss match the reference (vanilla and rope, float32 and float64, pad targets)"""
    for variant in ("vanilla", "rope"):
        for dtype in (torch.float32, torch.float64):
            state = common.gpt_state(SHAPE, variant, seed=50, dtype=dtype)
            x = common.tokens(3, 7, SHAPE.vocab_size, seed=51)
            y = common.targets(3, 7, SHAPE.vocab_size, seed=51)

            def run(impl, variant=variant, state=state, x=x, y=y):
                return common.gpt(impl, SHAPE, variant, state)(x, y)

            with parts(f"{variant}, {dtype}"):
                got, expected = run(student), oracle(run)
                assert isinstance(got, tuple | list) and len(got) == 2, "forward(idx, targets) returns (logits, loss)"
                assert_tensor(got[0], "the logits", shape=(3, 7, SHAPE.vocab_size), dtype=dtype)
                assert_close(got[0], expected[0], "the logits")
                common.assert_loss(got[1], expected[1])
    with parts("a sequence longer than block_size raises a ValueError"):
        model = common.gpt(student, SHAPE, "vanilla", common.gpt_state(SHAPE, "vanilla", seed=50))
        assert_raises_value_error(lambda: model(common.tokens(1, SHAPE.block_size + 1, SHAPE.vocab_size, seed=52)),
                                  f"forward on {SHAPE.block_size + 1} tokens with block_size = {SHAPE.block_size}",
                                  "the model has no position past block_size")


@graded(points=2, timeout=RECORDING_TIMEOUT, covers=["GPT"])
def test_loss_ignores_pad_targets(student, oracle, parts):
    """GPT: positions whose target is the pad id carry no loss"""
    state = common.gpt_state(SHAPE, "vanilla", seed=60, dtype=torch.float64)
    model = common.gpt(student, SHAPE, "vanilla", state)
    x = common.tokens(2, 6, SHAPE.vocab_size, seed=61)
    y = common.targets(2, 6, SHAPE.vocab_size, seed=61, pads=False)
    y[:, -1] = 0
    right = "the loss matches the reference"
    with parts(right):  # a wrong model ignores pads too: the properties below count once its loss is right
        common.assert_loss(model(x, y)[1], oracle(lambda impl: common.gpt(impl, SHAPE, "vanilla", state)(x, y))[1])
    with parts("changing the input whose target is a pad", requires=right):
        _, loss = model(x, y)
        changed = x.clone()
        changed[:, -1] = (x[:, -1] + 1 - 2) % (SHAPE.vocab_size - 2) + 2
        _, again = model(changed, y)
        assert_close(again, loss, "the loss after changing only the last input, whose target is the pad id (the "
                     "loss must ignore targets equal to 0: pass ignore_index=0 to cross_entropy)")
    with parts("a pad target added to the batch", requires=right):
        logits, _ = model(x)
        keep = y != 0
        wanted = torch.nn.functional.cross_entropy(logits[keep], y[keep]).float()
        common.assert_loss(loss, wanted, "the loss compared with the mean cross-entropy over the non-pad targets only")


@graded(points=2, timeout=RECORDING_TIMEOUT, covers=["GPT.generate", *GPT_COVERS], builds_on=["masking", "positions"])
def test_greedy_generate(student, oracle, parts):
    """GPT.generate: greedy decoding gives exactly the reference's ids, past block_size too; training mode kept"""
    for variant in ("vanilla", "rope"):
        state = common.gpt_state(SHAPE, variant, seed=70, dtype=torch.float64)
        prompt = common.tokens(2, 4, SHAPE.vocab_size, seed=71)

        def run(impl, variant=variant, state=state, prompt=prompt):
            return common.gpt(impl, SHAPE, variant, state).generate(prompt, 14)

        with parts(variant):
            got = run(student)
            assert_tensor(got, "generate(idx, 14)", shape=(2, 18), dtype=torch.int64)
            assert_close(got, oracle(run), "the generated ids")
    state = common.gpt_state(SHAPE, "vanilla", seed=72, dtype=torch.float64)
    prompt = common.tokens(2, 3, SHAPE.vocab_size, seed=73)

    def in_training(impl):
        model = common.gpt(impl, SHAPE, "vanilla", state, train=True)
        return model.generate(prompt, 5), read(model, "training")

    with parts("a model in training mode stays in it"):
        got, expected = in_training(student), oracle(in_training)
        assert_close(got[0], expected[0], "the ids generated by a model in training mode (dropout 0)")
        assert got[1] is True, ("after generate, a model that was in training mode is in eval mode: generate must "
                                "leave the training mode as it found it (its caller calls model.eval() first)")


DRAWS = 2000  # per prompt: a frequency is then within 5 standard errors (at most 0.056) of its probability


@graded(points=1, timeout=RECORDING_TIMEOUT, covers=["GPT.generate", *GPT_COVERS], builds_on=["masking", "positions"])
def test_sampled_generate(student, oracle):
    """GPT.generate: sampling draws from softmax(logits / temperature) over the top_k logits, with the generator"""
    state = common.gpt_state(SHAPE, "vanilla", seed=75, dtype=torch.float64)
    prompt = common.tokens(3, 3, SHAPE.vocab_size, seed=76)

    def run(impl):
        rng = impl.model.torch.Generator().manual_seed(77)
        return common.gpt(impl, SHAPE, "vanilla", state).generate(prompt, 6, sample=True, temperature=1.5, top_k=4,
                                                                   generator=rng)

    def last_logits(impl):
        return common.gpt(impl, SHAPE, "vanilla", state)(prompt)[0][:, -1]

    def draws(seed):
        rng = student.model.torch.Generator().manual_seed(seed)
        rows = prompt.repeat_interleave(DRAWS, dim=0)
        return common.gpt(student, SHAPE, "vanilla", state).generate(rows, 1, sample=True, temperature=1.5, top_k=4,
                                                                      generator=rng)

    # Asked before any check, so that both are recorded for replay. A correct sampler may draw other ids than the
    # reference's from the same generator (top_k ids sampled in their own order, a Gumbel-max draw): the ids are
    # judged by their distribution, and compared with the reference's only to name a known mistake.
    expected_ids, logits = oracle(run), oracle(last_logits).value
    got = run(student)
    try:
        assert_tensor(got, "generate(idx, 6, sample=True, ...)", shape=(3, 9), dtype=torch.int64)
        assert torch.equal(got[:, :3], prompt), "generate must return the prompt followed by the new ids"
        sampled = draws(78)
        assert_tensor(sampled, f"generate on {3 * DRAWS} prompts, 1 new id each", shape=(3 * DRAWS, 4),
                      dtype=torch.int64)
        assert torch.equal(sampled, draws(78)), (
            "two generators with the same seed gave different ids: draw with the generator argument (torch.multinomial("
            "..., generator=generator)), never from torch's global generator")
        _assert_sampled_from(sampled[:, -1].view(3, DRAWS), logits.double(), temperature=1.5, top_k=4)
    except AssertionError:
        recognise(got, expected_ids)  # the same ids as a known mistake's, if its sampler is written as the reference's
        raise


def _assert_sampled_from(ids: torch.Tensor, logits: torch.Tensor, temperature: float, top_k: int) -> None:
    """Each row of ``ids`` (prompts, draws) holds independent draws from softmax(logits / temperature) over the top_k
    logits of that prompt's row of ``logits`` (prompts, V)."""
    kth = torch.topk(logits, top_k, dim=-1).values[:, -1:]
    probabilities = torch.softmax((logits / temperature).masked_fill(logits < kth, float("-inf")), dim=-1)
    for row, (drawn, wanted) in enumerate(zip(ids, probabilities, strict=True)):
        outside = sorted({int(i) for i in drawn if wanted[int(i)] == 0})
        assert not outside, (f"prompt {row}: ids {outside} were drawn, but they are not among the top_k = {top_k} "
                             "logits: keep only the top_k logits (mask the others with -inf) before the softmax")
        frequencies = torch.bincount(drawn, minlength=len(wanted)).double() / len(drawn)
        allowed = 5 * (wanted * (1 - wanted) / len(drawn)).sqrt() + 1e-9
        worst = int(((frequencies - wanted).abs() / allowed).argmax())
        assert abs(frequencies[worst] - wanted[worst]) <= allowed[worst], (
            f"prompt {row}: id {worst} was drawn {float(frequencies[worst]):.1%} of {len(drawn)} times, where "
            f"softmax(logits / temperature) over the top_k logits gives it {float(wanted[worst]):.1%}: divide the "
            "logits by the temperature, keep the top_k largest, then sample from their softmax")


@graded(points=1, timeout=RECORDING_TIMEOUT, covers=GPT_COVERS, builds_on=["masking", "positions"])
def test_no_dropout_in_eval_mode(student, oracle):
    """GPT: in eval mode dropout is off (a model with dropout 0.5 gives the reference's eval-mode logits)"""
    state = common.gpt_state(SHAPE, "vanilla", seed=80)
    x = common.tokens(2, 6, SHAPE.vocab_size, seed=81)

    def run(impl):
        model = common.gpt(impl, SHAPE, "vanilla", state, dropout=0.5)
        return model(x)[0], model(x)[0], read(model, "training")

    got = run(student)
    assert got[2] is False, "model.eval() should leave the model with training == False"
    expected = oracle(run)
    assert_close(got[0], expected[0], "the logits in eval mode with dropout=0.5 (dropout must only act in training: "
                 "use nn.Dropout modules, or pass training=self.training)")
    assert_close(got[1], expected[1], "the logits of a second eval-mode call")
