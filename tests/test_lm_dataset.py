"""The LM reference's datasets: the vocabulary, span corruption and the finetuning examples."""

from __future__ import annotations

import random
import statistics

import pytest
import torch
from lm_support import (
    corpus,
    one_thread,  # noqa: F401 - an autouse fixture
    reference,
    tiny_world,
)

ds = reference().dataset
PAD, MASK = ds.PAD_CHAR, ds.MASK_CHAR


def test_special_characters_and_vocabulary_ids():
    assert (PAD, MASK) == ("\u25a1", "\u2047")
    vocab = ds.Vocabulary("cab\nba")
    assert vocab.itos == [PAD, MASK, "\n", "a", "b", "c"]
    assert vocab.stoi == {c: i for i, c in enumerate(vocab.itos)} and vocab.size == 6
    ids = vocab.encode("abc")
    assert ids.dtype == torch.long and ids.tolist() == [3, 4, 5]
    assert vocab.decode(ids) == "abc" and vocab.decode([0, 1]) == PAD + MASK
    with pytest.raises(ValueError, match="'z'"):
        vocab.encode("az")
    with pytest.raises(ValueError, match="reserved"):
        ds.Vocabulary(f"a{MASK}b")


def parse(example: str) -> tuple[str, str, str, int]:
    """(prefix, suffix, span, pads) of a span-corruption example; asserts its layout."""
    assert example.count(MASK) == 2, example
    prefix, suffix, rest = example.split(MASK)
    span = rest.rstrip(PAD)
    assert PAD not in prefix + suffix + span
    return prefix, suffix, span, len(rest) - len(span)


def test_span_corruption_layout_and_statistics():
    block, rng = 128, random.Random(3)
    document = "x" * 30 + "".join(chr(ord("a") + i % 26) for i in range(200))
    kept, spans = [], []
    for _ in range(3000):
        example = ds.corrupt(document, block, rng)
        assert len(example) == block + 1
        prefix, suffix, span, _ = parse(example)
        assert prefix + span + suffix == document[:len(prefix + span + suffix)]
        n = len(prefix + span + suffix)
        kept.append(n)
        spans.append(len(span) / n)
        assert 1 <= len(span) <= max(1, n // 2)
    assert min(kept) == 4 and max(kept) == int(7 / 8 * block)
    assert abs(statistics.mean(kept) - (4 + 112) / 2) < 3
    assert 0.22 < statistics.mean(spans) < 0.30 and statistics.pstdev(spans) > 0.1


def test_short_documents_keep_everything():
    rng = random.Random(0)
    for _ in range(50):
        prefix, suffix, span, pads = parse(ds.corrupt("ab", 16, rng))
        assert prefix + span + suffix == "ab" and len(span) == 1 and pads == 17 - 4


def test_pretraining_items_are_the_shifted_example_and_reproducible():
    text = corpus()
    first = ds.CharCorruptionDataset(text, 64, seed=5)
    second = ds.CharCorruptionDataset(text, 64, seed=5)
    assert len(first) == len([line for line in text.split("\n") if line])
    for index in range(len(first)):
        x, y = first[index]
        example = second.example(index)
        ids = first.vocab.encode(example)
        assert x.shape == y.shape == (64,) and x.dtype == y.dtype == torch.long
        assert torch.equal(x, ids[:-1]) and torch.equal(y, ids[1:])
    other = ds.CharCorruptionDataset(text, 64, seed=6)
    assert [other.example(i) for i in range(10)] != [second.example(i) for i in range(10)]


def test_finetuning_items_hide_the_question_targets():
    world = tiny_world()
    vocab = ds.Vocabulary(corpus())
    pairs = world.pairs(world.train)
    dataset = ds.NameDataset(pairs, vocab, 64)
    assert len(dataset) == len(pairs)
    for index, (question, answer) in enumerate(pairs):
        example = dataset.example(index)
        assert example == (question + MASK + answer + MASK).ljust(65, PAD)
        x, y = dataset[index]
        ids = vocab.encode(example)
        assert torch.equal(x, ids[:-1])
        assert (y[:len(question) - 1] == ds.PAD_ID).all()
        assert torch.equal(y[len(question) - 1:], ids[len(question):])
        assert y[len(question) - 1] == ds.MASK_ID
    with pytest.raises(ValueError, match="block_size"):
        ds.NameDataset([("Where was " + "A" * 80 + " born?", "X")], ds.Vocabulary("Where was A born?X"), 64)[0]
