"""Hidden tests: the same rules and numerics on inputs from the secret seed (corpora, block sizes, shapes, weights).

These never ship to students. Their inputs come from the ``seed`` fixture, which mixes in the term's secret.
"""

import torch

from autograder.grading import assert_close, assert_tensor, graded, recognise
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape
from autograder.suites.lm.world import generate_world

GPT_COVERS = ["GPT", "Block", "CausalSelfAttention", "RotaryCausalSelfAttention"]
MAX_DRAWS = 20  # draws tried for inputs on which AdamW's steps are decided by the trainer, not by rounding


def _pick(seed: int, options: list):
    return options[int(torch.randint(len(options), (1,), generator=common.generator(seed)))]


@graded(points=3, covers=["corrupt", "shift", "CharCorruptionDataset", "Vocabulary"])
def test_pretraining_examples(student, parts, seed):
    """CharCorruptionDataset on an unseen corpus and block size: layout, truncation and masked spans"""
    block = _pick(seed, [24, 40, 48])
    text = common.corpus(seed, people=20)
    documents = [line for line in text.split("\n") if line.strip()]
    data = student.dataset.CharCorruptionDataset(text, block, seed=seed % 1000)
    with parts("vocabulary ids"):
        itos = data.vocab.itos.get()
        assert itos == [common.PAD, common.MASK, *sorted(set(text))], (
            "the dataset's vocabulary must be the pad character (id 0), the mask character (id 1), then the corpus's "
            "characters sorted")
    examples = common.collect_examples(data, documents, 12)
    with parts(f"the layout, block_size={block}"):
        common.assert_layout(examples, documents)
    with parts(f"truncation, block_size={block}"):
        common.assert_truncation(examples, documents, block)
    with parts(f"masked spans, block_size={block}"):
        common.assert_spans(examples)


ACCENTED = str.maketrans("aeiou", "\u00e4\u00e9\u00ee\u00f6\u00fa")  # non-ASCII letters, which NameDataset drops


@graded(points=1, covers=["finetune_example", "NameDataset", "shift"])
def test_finetune_examples(student, oracle, parts, seed):
    """NameDataset on unseen question-answer pairs (some with non-ASCII letters)"""
    world = generate_world(seed, people=8, dev=2, test=2, bios_per_person=1, templates=2)
    pairs = world.pairs(world.people[:4])
    pairs[1] = (pairs[1][0].translate(ACCENTED), pairs[1][1])  # the question loses its accented letters
    pairs[2] = (pairs[2][0], pairs[2][1].translate(ACCENTED))  # the answer does
    text = "".join(f"{line}\n" for line in world.bios) + "".join(f"{q}\t{a}\n" for q, a in pairs)
    vocab = student.dataset.Vocabulary(text)
    data = student.dataset.NameDataset(pairs, vocab, 64)
    itos = [common.PAD, common.MASK, *sorted(set(text))]

    def items(impl):
        built = impl.dataset.NameDataset(pairs, impl.dataset.Vocabulary(text), 64)
        return [built.item(index) for index in range(len(pairs))]

    expected = oracle(items)
    for index, (question, answer) in enumerate(pairs):
        with parts(f"pair {index}"):
            x, y = data.item(index)
            try:
                common.assert_finetune_item(x, y, question, answer, itos, 64)
            except AssertionError:
                recognise((x, y), expected[index])
                raise


@graded(points=3, covers=GPT_COVERS, builds_on=["masking", "positions"])
def test_gpt_unseen_shapes(student, oracle, parts, seed):
    """GPT: logits, loss and greedy generation on unseen shapes and weights (vanilla and rope)"""
    for index, variant in enumerate(("vanilla", "rope")):
        n_head = _pick(seed + index, [1, 2, 4])
        shape = Shape(vocab_size=_pick(seed + 10 + index, [9, 17, 23]), block_size=_pick(seed + 20 + index, [6, 10]),
                      n_layer=_pick(seed + 30 + index, [1, 2, 3]), n_head=n_head, n_embd=4 * n_head)
        dtype = torch.float64 if index else torch.float32
        state = common.gpt_state(shape, variant, seed + index, dtype)
        B, T = 2, shape.block_size
        x = common.tokens(B, T, shape.vocab_size, seed + 40 + index)
        y = common.targets(B, T, shape.vocab_size, seed + 40 + index)

        def run(impl, shape=shape, variant=variant, state=state, x=x, y=y):
            model = common.gpt(impl, shape, variant, state)
            return (*model(x, y), model.generate(x[:, :3], 2 * shape.block_size))

        with parts(f"{variant}, {dtype}, {shape}"):
            got, expected = run(student), oracle(run)
            assert_tensor(got[0], "the logits", shape=(B, T, shape.vocab_size), dtype=dtype)
            assert_close(got[0], expected[0], "the logits")
            common.assert_loss(got[1], expected[1])
            assert_close(got[2], expected[2], f"the greedy ids of generate(idx, {2 * shape.block_size})")


UNSEEN_STEP_SHAPE = Shape(n_layer=1, n_head=2, n_embd=8, vocab_size=11, block_size=8)


def unseen_step_inputs(reference, seed: int) -> tuple[dict, list, dict]:
    """test_training_step_unseen's float64 state, three batches and schedule for ``seed``.

    About one draw in ten puts a gradient within a few hundred eps of zero, where rounding decides AdamW's step
    (common.adam_conditioned): such a draw is replaced by the next.
    """
    for draw in range(seed, seed + 1000 * MAX_DRAWS, 1000):
        state = common.gpt_state(UNSEEN_STEP_SHAPE, "rope", draw, torch.float64)
        batches = [(common.tokens(3, 8, 11, draw + i), common.targets(3, 8, 11, draw + i)) for i in range(3)]
        schedule = dict(learning_rate=1e-2 * (1 + draw % 5), lr_decay=True, warmup_tokens=30 + draw % 40,
                        final_tokens=200, weight_decay=0.2, grad_norm_clip=0.5)
        gradients = common.step_gradients(reference, UNSEEN_STEP_SHAPE, "rope", state, batches, **schedule)
        if common.adam_conditioned(gradients):
            break
    return state, batches, schedule


@graded(points=2, covers=["Trainer.step", "configure_optimizer", "learning_rate", "GPT"])
def test_training_step_unseen(student, reference, oracle, parts, seed):
    """Trainer.step: parameters after three steps from unseen weights, batches and schedule"""
    shape = UNSEEN_STEP_SHAPE
    state, batches, schedule = unseen_step_inputs(reference, seed)

    def run(impl):
        model = common.gpt(impl, shape, "rope", state, train=True)
        trainer = common.trainer(impl, model, **schedule)
        losses = [trainer.step(x, y) for x, y in batches]
        return losses, model.state_dict()

    got, expected = run(student), oracle(run)
    with parts("the losses"):
        for index in range(3):
            common.assert_loss(got[0][index], expected[0][index], f"the loss of step {index + 1}")
    with parts("the parameters after three steps", 2):
        common.assert_state_close(got[1], expected[1], "after three steps", 3 * schedule["learning_rate"])


@graded(points=1, covers=["learning_rate"])
def test_learning_rate_unseen(student, oracle, seed):
    """learning_rate at unseen token counts and milestones"""
    g = common.generator(seed)
    warmup, final = int(torch.randint(10, 500, (1,), generator=g)), int(torch.randint(600, 5000, (1,), generator=g))
    # every phase, whatever the draw: warm-up, decay, floor, and past final_tokens, where the cosine climbs again
    milestones = {0, warmup // 2, warmup, (warmup + final) // 2, final, final + 100, final + (final - warmup) // 2,
                  2 * final - warmup}
    counts = sorted({int(t) for t in torch.randint(0, 3 * final, (20,), generator=g)} | milestones)

    def run(impl):
        config = impl.trainer.TrainerConfig(learning_rate=1e-3, lr_decay=True, warmup_tokens=warmup,
                                            final_tokens=final)
        return [float(impl.trainer.learning_rate(t, config)) for t in counts]

    assert_close(run(student), oracle(run), f"the rates (warm-up {warmup} tokens, final {final}) at tokens {counts}",
                 rtol=1e-6, atol=1e-12)


DECAY_PAIRS = [("Who is Ab?", "Ulm"), ("Who is Cid?", "Rome"), ("Who is Ed?", "Oslo"), ("Who is Flo?", "Bonn")]
DECAY_TEXT = "".join(f"{q}\t{a}\n" for q, a in DECAY_PAIRS)
DECAY_SHAPE = Shape(vocab_size=len(set(DECAY_TEXT)) + 2, block_size=20, n_layer=1, n_head=2, n_embd=8)
# One step of 4 pairs (76 tokens), no warm-up, decaying over decay_epochs=1 epoch of 40 documents (800 tokens): the
# step's rate is 98 % of the full rate; decayed over the 4 pairs (80 tokens) instead, it would be at the 10 % floor.
DECAY_PRESET = dict(n_layer=1, n_head=2, n_embd=8, block_size=20, dropout=0.0, pretrain_epochs=1,
                    pretrain_batch_size=4, pretrain_lr=1e-2, finetune_epochs=1, scratch_epochs=1,
                    finetune_batch_size=4, finetune_lr=1e-2, warmup_tokens=1, decay_epochs=1, num_workers=0,
                    autocast="off")


def first_step_rate(impl, state) -> float:
    """How far finetune's first AdamW step moved the parameters, as a fraction of the preset's rate: the median
    element's |change| (a first Adam step moves an element by about the rate, whatever its gradient's size)."""
    model = common.gpt(impl, DECAY_SHAPE, "vanilla", state, train=True)
    impl.run.finetune(model, impl.dataset.Vocabulary(DECAY_TEXT), DECAY_PAIRS, impl.run.Preset(**DECAY_PRESET),
                      documents=40, pretrained=True, seed=0, device="cpu", progress=False, max_steps=1)
    after = common.value(model.state_dict())
    kept = all(isinstance(after.get(name), torch.Tensor) and after[name].shape == value.shape
               for name, value in state.items()) if isinstance(after, dict) else False
    assert kept, ("after finetune, model.state_dict() no longer holds the parameters of the model finetune was given "
                  "(their names and shapes, as in model.py's docstring): train the model you are given, in place")
    moved = torch.cat([(after[name].double() - state[name].double()).abs().flatten() for name in state])
    return float(moved.median()) / DECAY_PRESET["finetune_lr"]


@graded(points=1, covers=["finetune_config"])
def test_finetune_decays_over_the_corpus(student, oracle, seed):
    """finetune: the learning rate decays over the pretraining corpus's documents, not over the pairs"""
    state = common.gpt_state(DECAY_SHAPE, "vanilla", seed % 1000, torch.float64)
    assert_close(first_step_rate(student, state), oracle(lambda impl: first_step_rate(impl, state)),
                 "the first finetuning step's size as a fraction of the full rate (finetuning decays over "
                 "decay_epochs * documents * block_size tokens, documents counting the pretraining corpus)",
                 rtol=0.25, atol=0.0)

# autograder-hidden-canary-7d3e9a (never ships to students)
