"""Hidden tests found by mutation testing (``autograder validate --mutate lm``, docs/authoring.md): what the other
tests let through (the ends of random draws, refusals and their exception, a dropout site, a batch that stops early,
the model ``build_model`` makes)."""

import torch

from autograder.grading import assert_close, assert_tensor, graded, recognise
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape
from autograder.suites.positions.common import assert_raises_value_error

BLOCK = 32
SHAPE = Shape()


@graded(points=1, covers=["corrupt", "CharCorruptionDataset"])
def test_corruption_draws_reach_their_ends(dataset, seed):
    """corrupt: the kept length, the span's length and its start each reach both ends of their ranges"""
    long = "".join(chr(ord("a") + (i * 7 + seed) % 26) for i in range(2 * BLOCK))
    documents = ["x", "yz", long]
    data = dataset.CharCorruptionDataset("\n".join(documents) + "\n", BLOCK, seed=seed % 1000)
    examples = common.collect_examples(data, documents, 300)
    kept = [len(e.text) for index, e in examples if index == 2]
    top = int(7 / 8 * BLOCK)
    assert (min(kept), max(kept)) == (4, top), (f"over {len(kept)} draws the kept length of a long document ran "
                                                f"from {min(kept)} to {max(kept)}; draw it from 4 to {top}, both ends "
                                                "included")
    spans = [(len(e.span), len(e.text)) for _, e in examples]
    assert all(1 <= k <= max(1, n // 2) for k, n in spans), ("a masked span's length left 1 .. max(1, n // 2) (n "
                                                               "the kept length)")
    assert any(k == 1 for k, n in spans if n >= 4) and any(k == n // 2 for k, n in spans if n >= 4), (
        "the masked span's length never reached one of the ends of 1 .. n // 2")
    starts = [(len(e.prefix), len(e.text) - len(e.span)) for _, e in examples if len(e.text) >= 4]
    assert any(s == 0 for s, _ in starts) and any(s == last for s, last in starts), (
        "the masked span never starts at one of the ends of 0 .. n - k: draw its start from both ends included")


@graded(points=1, covers=["finetune_example", "Vocabulary", "GPT.forward", "exact_match"])
def test_refusals(student, parts):
    """A finetuning example that fits exactly is kept; what the docstrings refuse raises ValueError"""
    text = "Who is Ab?\tUlm\n"
    with parts("finetune_example of exactly block_size characters"):
        got = student.dataset.finetune_example("Who is Ab?", "Ulm", 15)
        assert got == f"Who is Ab?{common.MASK}Ulm{common.MASK}", (
            f"finetune_example of 15 characters with block_size = 15 gave {got!r}: it fits, so keep it (no pads)")
    cases = {
        "finetune_example of 16 characters with block_size = 15":
            (lambda: student.dataset.finetune_example("Who is Abe?", "Ulm", 15), "it does not fit"),
        "Vocabulary of a corpus holding the pad character":
            (lambda: student.dataset.Vocabulary(text + common.PAD), "the pad character is reserved"),
        "Vocabulary.encode of a character not in the corpus":
            (lambda: student.dataset.Vocabulary(text).encode("Who is Zed?"), "Z is not in the vocabulary"),
        f"GPT on {SHAPE.block_size + 1} tokens with block_size = {SHAPE.block_size}":
            (lambda: common.gpt(student, SHAPE, "vanilla", common.gpt_state(SHAPE, "vanilla", 5))(
                common.tokens(1, SHAPE.block_size + 1, SHAPE.vocab_size, 5)), "the sequence is too long"),
        "exact_match of 2 predictions for 3 answers":
            (lambda: student.run.exact_match(["Ulm", "Rome"], ["Ulm", "Rome", "Oslo"]), "the lists must pair up"),
    }
    for label, (call, why) in cases.items():
        with parts(f"{label} raises ValueError"):
            assert_raises_value_error(call, label, why)


@graded(points=1, covers=["GPT.forward"], builds_on=["masking", "positions"])
def test_embedding_dropout(student):
    """GPT: dropout on the embeddings (self.drop) on its own, the blocks' dropouts in eval mode"""
    state = common.gpt_state(SHAPE, "vanilla", 7)
    x = common.tokens(2, SHAPE.block_size, SHAPE.vocab_size, 7)
    model = common.gpt(student, SHAPE, "vanilla", state, dropout=0.5)
    plain = model(x)[0]
    model.drop.train()
    student.seed(7)
    dropped = model(x)[0]
    assert_tensor(dropped, "the logits", shape=tuple(plain.shape), dtype=plain.dtype)
    assert not torch.allclose(dropped, plain), ("with dropout=0.5 and only self.drop in training mode the logits equal "
                                                "the eval-mode logits: apply self.drop to the embeddings")


@graded(points=1, covers=["Block"], builds_on=["masking", "positions"])
def test_feed_forward_dropout(student, oracle):
    """Block: the feed-forward ends in its own dropout (mlp in training mode zeroes about half its outputs)"""
    state = common.block_state(SHAPE.n_embd, seed=60)
    h = torch.randn(2, 5, SHAPE.n_embd, generator=common.generator(61))

    def mlp(impl, train=False):
        module = common.block(impl, SHAPE, "vanilla", state, dropout=0.5).mlp
        module.train(train)
        return module

    def seeded(impl):
        module = mlp(impl, train=True)
        torch.manual_seed(0)  # after building, as for the student: building draws the initial weights
        return module(h)

    # The attention's dropouts are the masking assignment's checks; only the feed-forward's is the block's own, and a
    # check of the whole block in training mode passes whichever of the three sites drops. The eval-mode output is
    # test_block's point: here it is only the yardstick, so a wrong one earns nothing.
    right = mlp(student)(h)
    assert_close(right, oracle(lambda impl: mlp(impl)(h)), "mlp's eval-mode output with dropout=0.5")
    module = mlp(student, train=True)
    student.seed(0)
    dropped = module(h)
    assert_tensor(dropped, "mlp's training-mode output", shape=tuple(h.shape), dtype=h.dtype)
    zeros = float((dropped == 0).double().mean())
    try:
        assert 0.3 <= zeros <= 0.7, (f"with dropout=0.5, mlp in training mode leaves {zeros:.0%} of its outputs "
                                     "exactly 0, where a Dropout as mlp's last module zeroes about half")
        kept = dropped != 0
        assert torch.allclose(dropped[kept], 2 * right[kept], rtol=1e-4, atol=1e-6), (
            "with dropout=0.5 the outputs mlp keeps in training mode are not twice their eval-mode values: the "
            "Dropout must be mlp's last module, after the second Linear")
    except AssertionError:
        recognise(dropped, oracle(seeded))
        raise


@graded(points=1, covers=["learning_rate"])
def test_one_token_decay(student, oracle):
    """learning_rate: a decay of one token (final_tokens = warmup_tokens + 1), past it too"""
    counts = [0, 5, 10, 11, 12, 13]

    def run(impl):
        config = impl.trainer.TrainerConfig(learning_rate=1e-3, lr_decay=True, warmup_tokens=10, final_tokens=11)
        return [float(impl.trainer.learning_rate(t, config)) for t in counts]

    assert_close(run(student), oracle(run), f"the rates (warm-up 10 tokens, final 11) at tokens {counts}",
                 rtol=1e-6, atol=1e-12)


@graded(points=1, covers=["GPT.generate"], builds_on=["masking", "positions"])
def test_generate_a_batch_with_a_stop(student, oracle):
    """GPT.generate: three prompts with a stop id, each row its own"""
    state = common.gpt_state(SHAPE, "rope", 9, torch.float64)
    prompt = common.tokens(3, 2, SHAPE.vocab_size, 9)
    stop = int(oracle(lambda impl: common.gpt(impl, SHAPE, "rope", state).generate(prompt, 8)).value[0, 3])

    def run(impl):
        return common.gpt(impl, SHAPE, "rope", state).generate(prompt, 8, stop_id=stop)

    got, expected = run(student), oracle(run)
    assert_tensor(got, "generate(idx, 8, stop_id)", dtype=torch.int64)
    n = expected.value.shape[1]
    assert got.shape[0] == 3 and n <= got.shape[1] <= 10, (
        f"generate(idx, 8, stop_id) of 3 prompts of 2 tokens returned shape {tuple(got.shape)}: expected 3 rows of at "
        f"least {n} ids (it may stop once every row has produced stop_id) and at most 10")
    assert_close(got[:, :n], expected.map(lambda ids: ids[:, :n]), f"the first {n} ids of each row")


@graded(points=1, covers=["build_model"])
def test_build_model(student, oracle):
    """build_model: the preset's shape, and the same weights for the same seed"""
    first, second = (student.run.build_model("rope", 20, "cpu", seed=3).state_dict() for _ in range(2))
    expected = oracle(lambda impl: {k: tuple(v.shape) for k, v in impl.run.build_model("rope", 20, "cpu", 3)
                                    .state_dict().items()}).value
    assert isinstance(first, dict) and {k: tuple(v.shape) for k, v in first.items()} == expected, (
        "build_model('rope', 20, 'cpu') did not return a GPT of the cpu preset's shape (its state_dict differs)")
    for name, tensor in first.items():
        assert torch.equal(tensor, second[name]), (
            f"two build_model calls with seed=3 gave different {name}: seed torch with the seed right before the "
            "model is built")

# autograder-hidden-canary-7d3e9a (never ships to students)
