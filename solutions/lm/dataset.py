"""The two datasets of the knowledge-access experiment: span-corruption pretraining and finetuning.

Conventions (the grader relies on them):
- Vocabulary: id 0 is the pad character PAD_CHAR (U+25A1), id 1 the mask character MASK_CHAR (U+2047),
  then every distinct character of the pretraining corpus in sorted order (the newline included).
  Finetuning and evaluation reuse the pretraining corpus's vocabulary, even without pretraining.
- An example is a string s right-padded with PAD_CHAR; the model reads x = s[:-1] and predicts
  y = s[1:] (two int64 tensors of len(s) - 1). A target equal to the pad id carries no loss.
- Pretraining example of one document (one non-empty line of the corpus, see ``split_documents``): truncate
  it to a random length between 4 and int(7/8 * block_size) characters, cut a random span of average
  length a quarter of the truncated text, and write  prefix MASK suffix MASK span  then pads, to
  block_size + 1 characters: x and y are (block_size,).
- Finetuning example of one (question, answer) pair, both kept to their ASCII characters (CS224N reads
  the tsv file as data.encode('utf-8').decode('ascii', errors='ignore')):  question MASK answer MASK
  then pads, to block_size characters: x and y are (block_size - 1,), as in CS224N. The targets that
  predict question characters are the pad id (no loss on reading the question). Evaluation questions
  keep every character (CS224N does not strip them).
- Randomness comes from the dataset's own ``self.rng`` (a ``random.Random``), seeded by ``seed``, so
  an item sequence is reproducible and the trainer can save and restore it (exact resume).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch
from torch.utils.data import Dataset

PAD_CHAR = "\u25A1"
MASK_CHAR = "\u2047"
PAD_ID = 0
MASK_ID = 1


class Vocabulary:
    """Characters <-> integer ids, built from the pretraining corpus.

    Args:
        text: the whole pretraining corpus (for example the content of wiki.txt).
    Attributes:
        itos: list of characters; itos[i] is the character of id i (itos[0] = PAD_CHAR, itos[1] = MASK_CHAR,
            then the distinct characters of ``text`` in sorted order).
        stoi: dict character -> id, the inverse of itos.
    Raises:
        ValueError when ``text`` already contains PAD_CHAR or MASK_CHAR.
    """

    def __init__(self, text: str):
        # BEGIN SOLUTION refuse a corpus holding PAD_CHAR or MASK_CHAR; itos = [PAD_CHAR, MASK_CHAR] + sorted(set(text)); stoi inverts it
        for special in (PAD_CHAR, MASK_CHAR):
            if special in text:
                raise ValueError(f"the corpus contains the reserved character {special!r} (U+{ord(special):04X}); "
                                 "remove it from the text before building the vocabulary")
        self.itos = [PAD_CHAR, MASK_CHAR, *sorted(set(text))]
        self.stoi = {char: i for i, char in enumerate(self.itos)}
        # END SOLUTION

    @property
    def size(self) -> int:
        """Number of ids (the model's vocab_size)."""
        return len(self.itos)

    def encode(self, text: str) -> torch.Tensor:
        """(len(text),) int64 tensor of ids.

        Raises:
            ValueError naming the first character that is not in the vocabulary.
        """
        # BEGIN SOLUTION look every character up in stoi; an unknown one raises ValueError (say which character)
        unknown = next((char for char in text if char not in self.stoi), None)
        if unknown is not None:
            raise ValueError(f"character {unknown!r} of {text[:60]!r} is not in the vocabulary: the vocabulary comes "
                             "from the pretraining corpus, so pass the same corpus (wiki.txt) to every step")
        return torch.tensor([self.stoi[char] for char in text], dtype=torch.long)
        # END SOLUTION

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """The string of a sequence of ids (pads and masks included)."""
        # BEGIN SOLUTION join itos[i] for every id
        return "".join(self.itos[int(i)] for i in ids)
        # END SOLUTION


def split_documents(text: str) -> list[str]:
    """The documents of a corpus: its non-empty lines (len of CS224N's pretraining dataset on wiki.txt)."""
    return [line for line in text.split("\n") if line.strip()]


def corrupt(document: str, block_size: int, rng: random.Random) -> str:
    """One span-corruption example of ``document``.

    Args:
        document: one line of the corpus (no newline), at least 1 character.
        block_size: the model's context length; the result has block_size + 1 characters.
        rng: the only source of randomness.
    Returns:
        prefix + MASK_CHAR + suffix + MASK_CHAR + span + PAD_CHAR * (as many as needed), where
        prefix + span + suffix = document[:n] (n = min(len(document), L), L drawn uniformly from
        4 .. int(7/8 * block_size)), the span has a random length k drawn uniformly from
        1 .. max(1, n // 2) (so it averages about n / 4), and starts at a uniform position 0 .. n - k.
    """
    # BEGIN SOLUTION truncate with rng.randint(4, int(7 / 8 * block_size)); draw the span length with rng.randint(1, max(1, n // 2)) and its start with rng.randint(0, n - k); assemble, then pad to block_size + 1
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, max(1, n // 2))
    start = rng.randint(0, n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size + 1 - len(example))
    # END SOLUTION


def shift(example: str, vocab: Vocabulary) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of one example string s (of L characters).

    Returns:
        x = ids of s[:-1] and y = ids of s[1:], two (L - 1,) int64 tensors.
    """
    # BEGIN SOLUTION encode the whole string once, then slice
    ids = vocab.encode(example)
    return ids[:-1], ids[1:]
    # END SOLUTION


class CharCorruptionDataset(Dataset):
    """Span-corruption pretraining examples, one per document (non-empty line) of the corpus.

    Args:
        text: the pretraining corpus; documents are its non-empty lines.
        block_size: the model's context length T.
        vocab: the vocabulary (default: built from ``text``).
        seed: seed of ``self.rng``, the dataset's only source of randomness.
    Items: ``dataset[i]`` is (x, y), two (T,) int64 tensors (see ``shift``); every access draws a
    new corruption of document i. ``dataset.example(i)`` is the same draw as a string.
    """

    def __init__(self, text: str, block_size: int, vocab: Vocabulary | None = None, seed: int = 0):
        if block_size < 8:
            raise ValueError(f"block_size must be at least 8 (a document keeps at least 4 characters), got {block_size}")
        self.block_size = block_size
        self.vocab = vocab if vocab is not None else Vocabulary(text)
        self.documents = split_documents(text)
        if not self.documents:
            raise ValueError("the pretraining corpus has no non-empty line; pass the text of wiki.txt")
        self.rng = random.Random(seed)

    def __len__(self) -> int:
        return len(self.documents)

    def example(self, index: int) -> str:
        """A corrupted example string of document ``index`` (block_size + 1 characters)."""
        return corrupt(self.documents[index], self.block_size, self.rng)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return shift(self.example(index), self.vocab)

    def item(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``dataset[index]`` under a name the grader can call."""
        return self[index]


def finetune_example(question: str, answer: str, block_size: int) -> str:
    """question + MASK_CHAR + answer + MASK_CHAR, right-padded with PAD_CHAR to block_size characters.

    Raises:
        ValueError when the text does not fit (longer than block_size characters).
    """
    # BEGIN SOLUTION concatenate with the two masks; refuse what does not fit; pad to block_size (not block_size + 1)
    example = question + MASK_CHAR + answer + MASK_CHAR
    if len(example) > block_size:
        raise ValueError(f"{question!r} with its answer needs {len(example)} characters, more than block_size = "
                         f"{block_size}: use a larger block_size")
    return example + PAD_CHAR * (block_size - len(example))
    # END SOLUTION


class NameDataset(Dataset):
    """Finetuning examples: one per (question, answer) pair, e.g. ("Where was Ada born?", "London").

    Args:
        pairs: (question, answer) strings; ``self.pairs`` keeps their ASCII characters only (non-ASCII ones
            vanish, as CS224N's data.encode('utf-8').decode('ascii', errors='ignore') drops them).
        vocab: the pretraining corpus's vocabulary.
        block_size: the model's context length T.
    Items: ``dataset[i]`` is (x, y), two (T - 1,) int64 tensors from ``finetune_example`` (T characters):
    x = s[:-1], y = s[1:] except that the len(question) - 1 targets that predict the question's own
    characters are PAD_ID (question as kept in ``self.pairs``). The first target kept predicts the first
    MASK_CHAR. There is no randomness.
    """

    def __init__(self, pairs: Sequence[tuple[str, str]], vocab: Vocabulary, block_size: int):
        # BEGIN SOLUTION keep only the ASCII characters of every question and answer, as CS224N reads its tsv file
        self.pairs = [(str(question).encode("ascii", errors="ignore").decode("ascii"),
                       str(answer).encode("ascii", errors="ignore").decode("ascii")) for question, answer in pairs]
        # END SOLUTION
        self.vocab = vocab
        self.block_size = block_size

    def __len__(self) -> int:
        return len(self.pairs)

    def example(self, index: int) -> str:
        """The example string of pair ``index`` (block_size characters)."""
        question, answer = self.pairs[index]
        return finetune_example(question, answer, self.block_size)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        # BEGIN SOLUTION shift the example, then set the first len(question) - 1 targets to PAD_ID
        x, y = shift(self.example(index), self.vocab)
        y = y.clone()
        y[:len(self.pairs[index][0]) - 1] = PAD_ID
        return x, y
        # END SOLUTION

    def item(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """``dataset[index]`` under a name the grader can call."""
        return self[index]
