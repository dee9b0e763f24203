"""The LM reference's datasets: the vocabulary, span corruption and the finetuning examples."""

from __future__ import annotations

import random
import statistics

import pytest
import torch
from support.lm import (
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
    """CS224N's layout: the example is padded to block_size (not block_size + 1), so items are block_size - 1 long."""
    world = tiny_world()
    vocab = ds.Vocabulary(corpus())
    pairs = world.pairs(world.train)
    dataset = ds.NameDataset(pairs, vocab, 64)
    assert len(dataset) == len(pairs)
    for index, (question, answer) in enumerate(pairs):
        example = dataset.example(index)
        assert example == (question + MASK + answer + MASK).ljust(64, PAD)
        x, y = dataset[index]
        assert x.shape == y.shape == (63,)
        ids = vocab.encode(example)
        assert torch.equal(x, ids[:-1])
        assert (y[:len(question) - 1] == ds.PAD_ID).all()
        assert torch.equal(y[len(question) - 1:], ids[len(question):])
        assert y[len(question) - 1] == ds.MASK_ID
    fits = "Where was " + "A" * 45 + " born?"  # with a one-letter answer and the two masks: exactly 64 characters
    assert len(ds.NameDataset([(fits, "X")], ds.Vocabulary(fits + "X"), 64).example(0)) == 64
    with pytest.raises(ValueError, match="block_size"):
        ds.NameDataset([(fits + "A", "X")], ds.Vocabulary(fits + "X"), 64)[0]


def test_finetuning_keeps_only_ascii_like_cs224n():
    """CS224N reads the tsv file as ASCII, ignoring the rest: non-ASCII characters vanish from both sides."""
    text = "Where was Zoë Ångström born?\tZürich\nWhere was Al born?\tUlm\n"
    vocab = ds.Vocabulary(text)
    dataset = ds.NameDataset([("Where was Zoë Ångström born?", "Zürich"), ("Where was Al born?", "Ulm")], vocab, 48)
    assert dataset.pairs == [("Where was Zo ngstrm born?", "Zrich"), ("Where was Al born?", "Ulm")]
    assert dataset.example(0).startswith(f"Where was Zo ngstrm born?{MASK}Zrich{MASK}{PAD}")
    x, y = dataset[0]
    question = len("Where was Zo ngstrm born?")
    assert (y[:question - 1] == ds.PAD_ID).all() and y[question - 1] == ds.MASK_ID


def test_documents_are_the_non_empty_lines():
    assert ds.split_documents("a b\n\n  \nc\n") == ["a b", "c"]
    assert len(ds.CharCorruptionDataset("abcdefgh\n\nijklmnop\n", 16)) == 2
