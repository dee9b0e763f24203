"""Inputs and property checks shared by the lm tests. Every builder is deterministic in its seed.

A test computes the student's value with ``fn(student)`` and the expected one with ``oracle(fn)``: ``fn``
receives either the student proxy or a local implementation, both with ``.dataset``, ``.model``, ``.trainer``
and ``.run``. Models are built from a small ``Shape`` and a state dict made here (not by the reference, so
public tests replay without it). Dataset checks read example strings and judge them against the rules of
the handout; they need no reference, so they run on corpora from the hidden seed.
"""

from __future__ import annotations

import math
import os
import stat
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from autograder.grading import Expected, RemoteAttr, assert_close, assert_tensor
from autograder.suites.lm.world import generate_world
from autograder.suites.masking.common import generator

__all__ = ["generator", "value", "Shape", "block_state", "gpt_state", "gpt", "block", "tokens", "targets",
           "assert_loss", "assert_state_close", "step_gradients", "adam_conditioned", "corpus", "parameter_names",
           "trainer", "grad_norm", "PAD", "MASK",
           "Example", "parse_example", "collect_examples", "assert_layout", "assert_truncation", "assert_spans",
           "ascii_only", "finetune_text", "assert_finetune_item", "read_plain_text", "baseline_threshold"]

PAD, MASK = "\u25A1", "\u2047"
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Shape:
    """A model's shape: GPTConfig's vocab_size, block_size, n_layer, n_head and n_embd."""

    vocab_size: int = 13
    block_size: int = 12
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 8


def value(attr):
    """The value of an attribute read on the student proxy (``.get()``) or on a local object (itself)."""
    return attr.get() if isinstance(attr, RemoteAttr) else attr


def _normal(g: torch.Generator, dtype: torch.dtype, *size: int, scale: float) -> torch.Tensor:
    return (scale * torch.randn(size, generator=g, dtype=torch.float64)).to(dtype)


def block_state(D: int, seed: int, dtype: torch.dtype = torch.float32, prefix: str = "") -> dict[str, torch.Tensor]:
    """A Block's parameters: ln1, attn.{query,key,value,proj}, ln2, mlp.0 (4D, D), mlp.2 (D, 4D); LayerNorm
    gains near 1 and small non-zero biases (a block that skips a bias or a gain differs)."""
    g = generator(seed)
    state = {}
    for name in ("ln1", "ln2"):
        state[f"{prefix}{name}.weight"] = 1 + _normal(g, dtype, D, scale=0.3)
        state[f"{prefix}{name}.bias"] = _normal(g, dtype, D, scale=0.1)
    for name in ("query", "key", "value", "proj"):
        state[f"{prefix}attn.{name}.weight"] = _normal(g, dtype, D, D, scale=1 / math.sqrt(D))
        state[f"{prefix}attn.{name}.bias"] = _normal(g, dtype, D, scale=0.1)
    state[f"{prefix}mlp.0.weight"] = _normal(g, dtype, 4 * D, D, scale=1 / math.sqrt(D))
    state[f"{prefix}mlp.0.bias"] = _normal(g, dtype, 4 * D, scale=0.1)
    state[f"{prefix}mlp.2.weight"] = _normal(g, dtype, D, 4 * D, scale=1 / math.sqrt(4 * D))
    state[f"{prefix}mlp.2.bias"] = _normal(g, dtype, D, scale=0.1)
    return state


def gpt_state(shape: Shape, variant: str, seed: int, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """A GPT's parameters with the handout's names (pos_emb only for ``vanilla``)."""
    g = generator(seed)
    V, T, D = shape.vocab_size, shape.block_size, shape.n_embd
    state = {"tok_emb.weight": _normal(g, dtype, V, D, scale=1.0)}
    if variant == "vanilla":
        state["pos_emb.weight"] = _normal(g, dtype, T, D, scale=1.0)
    for i in range(shape.n_layer):
        state.update(block_state(D, seed + 101 * (i + 1), dtype, prefix=f"blocks.{i}."))
    state["ln_f.weight"] = 1 + _normal(g, dtype, D, scale=0.3)
    state["ln_f.bias"] = _normal(g, dtype, D, scale=0.1)
    state["head.weight"] = _normal(g, dtype, V, D, scale=2 / math.sqrt(D))
    return state


def _config(impl, shape: Shape, variant: str, dropout: float):
    return impl.model.GPTConfig(**asdict(shape), dropout=dropout, variant=variant)


def _loaded(module, state: dict, train: bool):
    if next(iter(state.values())).dtype == torch.float64:
        module.double()
    module.load_state_dict(state)
    module.train(train)
    return module


def gpt(impl, shape: Shape, variant: str, state: dict, *, dropout: float = 0.0, train: bool = False):
    """A GPT of ``impl`` holding ``state`` (its dtype), in eval mode unless ``train``."""
    return _loaded(impl.model.GPT(_config(impl, shape, variant, dropout)), state, train)


def block(impl, shape: Shape, variant: str, state: dict, *, dropout: float = 0.0, train: bool = False):
    """A Block of ``impl`` holding ``state`` (its dtype)."""
    return _loaded(impl.model.Block(_config(impl, shape, variant, dropout)), state, train)


def tokens(batch: int, T: int, vocab_size: int, seed: int, low: int = 2) -> torch.Tensor:
    """(batch, T) int64 ids in low..vocab_size-1 (by default neither pad nor mask)."""
    return torch.randint(low, vocab_size, (batch, T), generator=generator(seed))


def targets(batch: int, T: int, vocab_size: int, seed: int, pads: bool = True) -> torch.Tensor:
    """(batch, T) int64 targets; with ``pads`` each row ends in a run of pad ids (0) and row 0 starts with some,
    as in finetuning, where the question's targets are pads."""
    y = tokens(batch, T, vocab_size, seed + 1, low=1)
    if pads:
        for row in range(batch):
            y[row, T - 1 - row % max(1, T // 2):] = 0
        y[0, :2] = 0
    return y


def assert_loss(got, expected, what: str = "the loss") -> None:
    """A loss is a 0-dim floating tensor close to ``expected`` (a value or ``Expected``), compared in float32 (the
    handout leaves its dtype open: a float64 model's loss may be computed in float32 or float64)."""
    assert_tensor(got, what)
    assert got.numel() == 1, f"{what}: shape {tuple(got.shape)}, expected a single number (a 0-dim tensor)"
    assert got.is_floating_point(), f"{what}: dtype {got.dtype}, expected a floating-point tensor"
    wanted = expected.value if isinstance(expected, Expected) else expected

    def single(loss):
        return loss.float().reshape(wanted.shape)

    assert_close(single(got), expected.map(single) if isinstance(expected, Expected) else single(expected), what,
                 rtol=1e-4, atol=1e-5)


# AdamW moves a parameter by about its learning rate per step, in a direction m / (sqrt(v) + eps) that does not
# depend on the gradient's scale. Parameters after steps are compared to within this fraction of how far the steps
# may move them: a correct trainer whose loss is computed in float32 (the handout allows it) lands within 1e-5 of
# that distance on well-conditioned inputs (``adam_conditioned``), a mistake (a learning rate off, weight decay on
# gains and biases, no clipping, loss on pads) 5e-2 or more away.
STEP_TOLERANCE = 1e-3
# Adam's update of an element whose gradient is within a few hundred eps (1e-8) of zero is decided by rounding:
# float32 and float64 losses gave steps 2 % apart on a gradient of 1.1e-8. Gradients below ZERO_GRADIENT are
# exact zeros up to rounding (a key bias under softmax, an unused embedding row) and are steady.
CONDITIONED_GRADIENT, ZERO_GRADIENT = 1e-6, 1e-12


def assert_state_close(got, expected: Expected, when: str, moved: float) -> None:
    """Every parameter of a state dict ``got`` is within ``STEP_TOLERANCE * moved`` of ``expected``'s (float64 models
    after optimiser steps; ``moved``: how far AdamW may move a parameter in them, the sum of their learning rates or
    a bound on it)."""
    assert isinstance(got, dict), f"state_dict() returned {type(got).__name__}, expected a dict"
    for name in expected.value:
        assert name in got, f"the model's state_dict has no {name}"
        assert_close(got[name], expected[name], f"{name} {when}", rtol=0.0, atol=STEP_TOLERANCE * moved)


def step_gradients(impl, shape: Shape, variant: str, state: dict, batches: list, **config) -> list[torch.Tensor]:
    """The gradients a ``common.trainer`` of ``impl`` (with ``config``) steps on, one flat float64 tensor per batch
    of ``batches`` ((x, y) pairs)."""
    model = gpt(impl, shape, variant, state, train=True)
    stepper = trainer(impl, model, **config)
    flat = []
    for x, y in batches:
        stepper.step(x, y)
        flat.append(torch.cat([p.grad.detach().double().flatten() for p in model.parameters() if p.grad is not None]))
    return flat


def adam_conditioned(gradients: list[torch.Tensor]) -> bool:
    """Whether no element of ``gradients`` (``step_gradients``) is so close to zero that rounding decides its AdamW
    step, so that the parameters after the steps do not depend on the order of a correct trainer's operations."""
    return all(bool(((g.abs() < ZERO_GRADIENT) | (g.abs() > CONDITIONED_GRADIENT)).all()) for g in gradients)


def corpus(seed: int, people: int = 24) -> str:
    """The text of a small generated wiki.txt (one biography a line, a newline after each)."""
    world = generate_world(seed, people=people, dev=2, test=2, bios_per_person=1, templates=4)
    return "".join(f"{line}\n" for line in world.bios)


def parameter_names(shape: Shape, variant: str) -> list[str]:
    """Every parameter name of a GPT of ``shape``."""
    return list(gpt_state(shape, variant, 0))


def trainer(impl, model, **config):
    """A Trainer of ``impl`` on the CPU, without autocast or progress bar, for ``model`` (no dataset: a step's
    token count is then B * T)."""
    settings = dict(device="cpu", autocast="off", progress=False, **config)
    return impl.trainer.Trainer(model, [], None, impl.trainer.TrainerConfig(**settings))


def grad_norm(model, names: list[str]) -> float:
    """The L2 norm of the gradients of ``model``'s parameters ``names`` (missing gradients count as 0)."""
    total = 0.0
    for name in names:
        attr = model
        for part in name.split("."):
            attr = getattr(attr, part)
        grad = value(attr.grad)
        if grad is not None:
            total += float(grad.double().pow(2).sum())
    return math.sqrt(total)


# ---------------------------------------------------------------- dataset properties


@dataclass(frozen=True)
class Example:
    """A pretraining example split by its layout: prefix MASK suffix MASK span, then pads."""

    prefix: str
    suffix: str
    span: str

    @property
    def text(self) -> str:
        """The document text the example was cut from (prefix + span + suffix)."""
        return self.prefix + self.span + self.suffix


def parse_example(s: str, block_size: int) -> Example:
    """Split one example string by the handout's layout, or fail naming the broken rule."""
    assert isinstance(s, str), f"example(i) should return a str, got a {type(s).__name__}"
    assert len(s) == block_size + 1, (f"an example has {len(s)} characters; it must have block_size + 1 = "
                                      f"{block_size + 1} (pad with the pad character {PAD!r} at the end)")
    masks = s.count(MASK)
    assert masks != 1, (f"the example {s!r} holds the mask character only once: the layout is prefix MASK suffix "
                        "MASK masked_span, with the mask character written twice")
    assert masks == 2, f"the example {s!r} holds the mask character {masks} times; it must hold it exactly twice"
    body = s.rstrip(PAD)
    assert PAD not in body, f"the example {s!r} has pad characters before its end: pads only go after the span"
    prefix, suffix, span = body.split(MASK)
    assert span, f"the example {s!r} has an empty masked span: mask at least one character"
    return Example(prefix, suffix, span)


def collect_examples(dataset, documents: list[str], draws: int) -> list[tuple[int, Example]]:
    """``draws`` examples of every document (by index) of ``dataset``, parsed."""
    block_size = int(value(dataset.block_size))
    out = []
    for _ in range(draws):
        for index in range(len(documents)):
            out.append((index, parse_example(dataset.example(index), block_size)))
    return out


def assert_layout(examples: list[tuple[int, Example]], documents: list[str]) -> None:
    """Each example's prefix + span + suffix is the start of its document."""
    for index, example in examples:
        document = documents[index]
        assert document.startswith(example.text), (
            f"for the document {document[:50]!r}..., the example has prefix {example.prefix!r}, masked span "
            f"{example.span!r} and suffix {example.suffix!r}; prefix + span + suffix should be the document's first "
            f"{len(example.text)} characters (the layout is prefix MASK suffix MASK span, pads)")


def assert_truncation(examples: list[tuple[int, Example]], documents: list[str], block_size: int) -> None:
    """Kept lengths lie in 4..int(7/8 block_size) (or the whole, shorter document), reach both ends and vary."""
    top = int(7 / 8 * block_size)
    long_kept = []
    for index, example in examples:
        n, whole = len(example.text), len(documents[index])
        assert n <= top, (f"an example keeps {n} characters of its document; truncate to at most int(7/8 * "
                          f"block_size) = {top} characters (is the upper end of the random length off by one?)")
        assert n >= min(4, whole), f"an example keeps only {n} characters; keep at least 4"
        if whole > top:
            long_kept.append(n)
    assert long_kept, "the test corpus has no document longer than 7/8 of block_size (a grader problem)"
    assert len(set(long_kept)) > 1, (f"every long document is cut to {long_kept[0]} characters: the truncation "
                                     f"length must be random, between 4 and {top}")
    assert max(long_kept) == top, (f"documents are never kept at {top} = int(7/8 * block_size) characters (the "
                                   f"longest kept is {max(long_kept)}): the random length should reach {top}")
    assert min(long_kept) <= 6, (f"documents are never cut short (the shortest kept is {min(long_kept)} characters): "
                                 "the random length should start at 4")
    mean = statistics.fmean(long_kept)
    assert abs(mean - (4 + top) / 2) < 0.15 * top, (
        f"the kept lengths average {mean:.1f}; a length drawn uniformly from 4..{top} averages {(4 + top) / 2:.1f}")


def assert_spans(examples: list[tuple[int, Example]]) -> None:
    """Masked spans lie in 1..max(1, n // 2) and reach both ends, average about a quarter of the kept text, and their
    length varies for the same text length."""
    for _, example in examples:  # the whole range of the draw, not only its mean: 1 .. max(1, n // 2)
        n, k = len(example.text), len(example.span)
        assert 1 <= k <= max(1, n // 2), (f"a masked span of {k} characters in a kept text of {n}: draw its length "
                                          f"from 1..max(1, n // 2) = 1..{max(1, n // 2)}")
    assert any(len(e.span) == 1 for _, e in examples if len(e.text) >= 4), (
        "no masked span is ever 1 character long: draw its length from the whole range 1..n // 2")
    assert any(len(e.span) == len(e.text) // 2 for _, e in examples if len(e.text) >= 8), (
        "no masked span ever reaches n // 2 characters: draw its length from the whole range 1..n // 2")
    ratios = [len(e.span) / len(e.text) for _, e in examples]
    mean = statistics.fmean(ratios)
    assert 0.17 <= mean <= 0.33, (f"the masked span averages {mean:.0%} of the kept text; it should average about a "
                                  "quarter (a length drawn uniformly from 1..n // 2)")
    by_length: dict[int, set[int]] = defaultdict(set)
    counts: dict[int, int] = defaultdict(int)
    for _, example in examples:
        by_length[len(example.text)].add(len(example.span))
        counts[len(example.text)] += 1
    seen = [n for n in by_length if counts[n] >= 6 and n >= 8]
    assert seen, "too few examples of one length to judge the masked spans (a grader problem)"
    varied = sum(len(by_length[n]) > 1 for n in seen)
    assert varied >= len(seen) / 2, ("the masked span always has the same length for a given text length: draw its "
                                      "length at random (uniformly from 1..n // 2)")
    starts = {len(e.prefix) for _, e in examples if len(e.text) >= 8}
    assert len(starts) > 2, "the masked span always starts at the same place: draw its start at random"


def ascii_only(text: str) -> str:
    """``text`` without its non-ASCII characters (CS224N reads its tsv files so: they vanish from the pairs)."""
    return text.encode("ascii", errors="ignore").decode("ascii")


def finetune_text(question: str, answer: str, block_size: int) -> str:
    """The example string of a finetuning pair: question MASK answer MASK, pads to block_size characters, ASCII only."""
    s = ascii_only(question) + MASK + ascii_only(answer) + MASK
    return s + PAD * (block_size - len(s))


def assert_finetune_item(x, y, question: str, answer: str, vocab_itos: list[str], block_size: int) -> None:
    """(x, y) of a finetuning pair: x = s[:-1], y = s[1:] of ``finetune_text`` (block_size - 1 ids each), with the
    targets that predict the question's own characters set to the pad id."""
    stoi = {c: i for i, c in enumerate(vocab_itos)}
    ids = torch.tensor([stoi[c] for c in finetune_text(question, answer, block_size)])
    shown = f"({question!r}, {answer!r})"
    assert_tensor(x, "x")
    if tuple(x.shape) == (block_size,):
        raise AssertionError(f"x for {shown} has block_size = {block_size} ids: pad question MASK answer MASK to "
                             f"block_size characters (not block_size + 1), so that x = s[:-1] and y = s[1:] have "
                             f"block_size - 1 = {block_size - 1}, as in CS224N")
    assert_tensor(x, "x", shape=(block_size - 1,), dtype=torch.int64)
    assert_tensor(y, "y", shape=(block_size - 1,), dtype=torch.int64)
    kept = question + MASK + answer + MASK  # the layout with the non-ASCII characters left in
    if ascii_only(question + answer) != question + answer and len(kept) <= block_size and set(kept) <= stoi.keys():
        if torch.equal(x, torch.tensor([stoi[c] for c in kept + PAD * (block_size - len(kept))])[:-1]):
            raise AssertionError(f"x for {shown} keeps the non-ASCII characters: CS224N reads the pairs as ASCII "
                                 "(data.encode('utf-8').decode('ascii', errors='ignore')), so they vanish from "
                                 "questions and answers")
    assert_close(x, ids[:-1], f"x for {shown}: the ids of s[:-1], s = question MASK answer MASK then pads to "
                 "block_size characters, non-ASCII characters left out")
    q = len(ascii_only(question)) - 1
    if bool((y[:q] != 0).any()) and torch.equal(y[q:], ids[1:][q:]):
        raise AssertionError(f"y for {shown} keeps the targets of the question's characters: set the first "
                             f"len(question) - 1 = {q} targets to the pad id 0, so the loss ignores reading the "
                             "question")
    expected = ids[1:].clone()
    expected[:q] = 0
    assert_close(y, expected, f"y for {shown}: the ids of s[1:], the first len(question) - 1 = {q} set to the pad id 0")


# ---------------------------------------------------------------- predictions files


def read_plain_text(path: Path) -> str:
    """The text of a regular file at ``path`` (no link followed, at most MAX_BYTES), or AssertionError saying why."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise AssertionError(f"{path.name} cannot be read ({exc.strerror}); hand in the plain text file that "
                             "run.py evaluate writes") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:  # checked before a file object: a folder refuses one
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a plain file"
        raise AssertionError(f"{path.name} is {kind}: hand in the text file that run.py evaluate writes (one answer a "
                             "line), or no file of that name")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    assert len(data) <= MAX_BYTES, f"{path.name} is larger than {MAX_BYTES >> 20} MB; write one short answer a line"
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise AssertionError(f"{path.name} is not UTF-8 text; write it with run.py evaluate") from None


def baseline_threshold(labels: list[str], baseline: str) -> float:
    """The accuracy a predictions file needs: the majority baseline's, plus two binomial standard errors."""
    rate = sum(answer == baseline for answer in labels) / len(labels)
    return rate + 2 * math.sqrt(max(rate * (1 - rate), 1e-4) / len(labels))
