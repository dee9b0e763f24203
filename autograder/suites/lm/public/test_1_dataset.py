"""dataset.py: the vocabulary, span-corruption pretraining examples and finetuning examples.

These checks judge the examples against the handout's rules (no expected values): the failure says which rule.
"""

import torch

from autograder.grading import assert_close, assert_tensor, graded, recognise
from autograder.suites.lm import common
from autograder.suites.positions.common import assert_raises_value_error

BLOCK = 32
DRAWS = 12


def _documents(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


@graded(points=2, covers=["Vocabulary"])
def test_vocabulary(dataset, parts):
    """Vocabulary: pad is id 0, mask id 1, then the corpus's characters in sorted order"""
    text = common.corpus(7, people=6)
    expected = [common.PAD, common.MASK, *sorted(set(text))]
    vocab = dataset.Vocabulary(text)
    with parts("itos"):
        itos = vocab.itos.get()
        assert isinstance(itos, list) and len(itos) == len(expected), (
            f"itos has {len(itos) if isinstance(itos, list) else 'no'} entries; expected a list of {len(expected)}: "
            "the pad and mask characters, then every distinct character of the corpus")
        assert itos[:2] == [common.PAD, common.MASK], (
            f"itos starts with {itos[:2]!r}: id 0 must be the pad character U+25A1 and id 1 the mask character "
            "U+2047 (the loss ignores id 0)")
        assert itos == expected, "after the pad and mask characters, itos must list the corpus's characters sorted"
    with parts("stoi, encode and decode"):
        stoi = vocab.stoi.get()
        assert stoi == {c: i for i, c in enumerate(expected)}, "stoi must map each character to its index in itos"
        ids = vocab.encode(text[:40])
        assert_tensor(ids, "encode(text)", shape=(40,), dtype=torch.int64)
        assert_close(ids, torch.tensor([expected.index(c) for c in text[:40]]), "encode(text)")
        assert vocab.decode(ids) == text[:40], "decode(encode(text)) must give back the text"
    with parts("a corpus holding the pad or mask character is refused"):
        for special in (common.PAD, common.MASK):
            assert_raises_value_error(lambda special=special: dataset.Vocabulary(text + special),
                                      f"Vocabulary of a corpus holding {special!r}",
                                      "the pad and mask characters have ids 0 and 1 of their own")
    with parts("a character outside the vocabulary"):
        assert "\u00a7" not in text
        assert_raises_value_error(lambda: vocab.encode("Ada\u00a7"), "encode('Ada\u00a7')",
                                  "the vocabulary comes from the corpus, and a character it lacks has no id",
                                  mention="\u00a7")


@graded(points=3, covers=["corrupt", "shift", "CharCorruptionDataset"])
def test_pretraining_layout(dataset, parts):
    """CharCorruptionDataset: examples are prefix MASK suffix MASK span then pads, and x = s[:-1], y = s[1:]"""
    text = common.corpus(11)
    documents = _documents(text)
    data = dataset.CharCorruptionDataset(text, BLOCK, seed=3)
    with parts("the layout prefix MASK suffix MASK span, pads", 2):
        common.assert_layout(common.collect_examples(data, documents, 2), documents)
    with parts("x = s[:-1], y = s[1:]"):
        itos = data.vocab.itos.get()
        for index in range(4):
            x, y = data.item(index)
            assert_tensor(x, "x", shape=(BLOCK,), dtype=torch.int64)
            assert_tensor(y, "y", shape=(BLOCK,), dtype=torch.int64)
            assert_close(y[:-1], x[1:], "y[:-1] compared with x[1:] (x = ids of s[:-1] and y = ids of s[1:] of the "
                         "same example s)")
            s = "".join(itos[int(i)] for i in x) + itos[int(y[-1])]
            common.assert_layout([(index, common.parse_example(s, BLOCK))], documents)


@graded(points=2, covers=["corrupt", "CharCorruptionDataset"])
def test_truncation(dataset, parts):
    """CharCorruptionDataset: documents are cut to a random length from 4 to int(7/8 block_size)"""
    text = common.corpus(13)
    documents = _documents(text)
    data = dataset.CharCorruptionDataset(text, BLOCK, seed=4)
    with parts("kept lengths"):
        common.assert_truncation(common.collect_examples(data, documents, DRAWS), documents, BLOCK)


@graded(points=2, covers=["corrupt", "CharCorruptionDataset"])
def test_masked_span(dataset, parts):
    """CharCorruptionDataset: the masked span has a random length averaging a quarter of the text"""
    text = common.corpus(17)
    documents = _documents(text)
    data = dataset.CharCorruptionDataset(text, BLOCK, seed=5)
    with parts("span lengths and starts"):
        common.assert_spans(common.collect_examples(data, documents, DRAWS))


@graded(points=1, covers=["CharCorruptionDataset"])
def test_seeded(dataset):
    """CharCorruptionDataset: the same seed gives the same examples (the dataset's own rng)"""
    text = common.corpus(19, people=4)
    first, second = (dataset.CharCorruptionDataset(text, BLOCK, seed=9) for _ in range(2))
    a = [first.example(i % 4) for i in range(8)]
    b = [second.example(i % 4) for i in range(8)]
    assert a == b, "two datasets built with the same seed gave different examples: draw from self.rng only"


# The second pair holds non-ASCII characters, which CS224N's NameDataset drops (it reads its tsv file as ASCII).
PAIRS = [("Where was Ada born?", "Lowen"), ("Where was Zo\u00eb N\u00fa born?", "Z\u00fcrich"),
         ("Where was Bo Li born?", "Sa"), ("Who?", "Ulm")]


@graded(points=2, covers=["finetune_example", "NameDataset", "shift"])
def test_finetune_examples(student, oracle, parts):
    """NameDataset: question MASK answer MASK padded to block_size, ASCII only; no loss on reading the question"""
    dataset = student.dataset
    text = common.corpus(23, people=6) + "".join(f"{q}\t{a}\n" for q, a in PAIRS)
    vocab = dataset.Vocabulary(text)
    itos = vocab.itos.get()
    data = dataset.NameDataset(PAIRS, vocab, BLOCK)

    def items(impl):
        built = impl.dataset.NameDataset(PAIRS, impl.dataset.Vocabulary(text), BLOCK)
        return [built.item(index) for index in range(len(PAIRS))]

    def example(impl):
        return impl.dataset.finetune_example(*PAIRS[0], BLOCK)

    expected_items, expected_example = oracle(items), oracle(example)  # asked before any check: recorded for replay
    with parts("finetune_example"):
        s = dataset.finetune_example(*PAIRS[0], BLOCK)
        wanted = common.finetune_text(*PAIRS[0], BLOCK)
        if s != wanted:
            recognise(s, expected_example)
            raise AssertionError(f"finetune_example gave {s!r}; expected question MASK answer MASK then pads, "
                                 f"block_size = {BLOCK} characters (not block_size + 1)")
    with parts("an example that fits exactly, and one character more"):
        question, answer = "Who?", "x" * (BLOCK - 6)  # 4 + 1 + (BLOCK - 6) + 1 = BLOCK characters: no pad
        s = dataset.finetune_example(question, answer, BLOCK)
        assert s == f"{question}{common.MASK}{answer}{common.MASK}", (
            f"finetune_example({question!r}, {len(answer)} characters, {BLOCK}) gave {s!r}; with the two masks it "
            f"is exactly block_size = {BLOCK} characters long, so it fits, with no pad")
        assert_raises_value_error(lambda: dataset.finetune_example(question, answer + "x", BLOCK),
                                  f"finetune_example with {BLOCK + 1} characters and block_size = {BLOCK}",
                                  "the text does not fit in block_size characters")
    for index, (question, answer) in enumerate(PAIRS):
        with parts(f"item {index}"):
            x, y = data.item(index)
            try:
                common.assert_finetune_item(x, y, question, answer, itos, BLOCK)
            except AssertionError:
                recognise((x, y), expected_items[index])
                raise
