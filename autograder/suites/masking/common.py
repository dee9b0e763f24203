"""Inputs and checks shared by the masking tests, and by the later suites that build on its self-attention
(positions). Every builder is deterministic in its seed.

A test computes the student's value with ``fn(student)`` and the expected one with ``oracle(fn)``:
``fn`` receives either the student proxy or a local implementation, both with a ``.masking``.
"""

import math

import torch

from autograder.grading import Expected, StudentError, assert_close, assert_tensor, recognise


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed))


def scores(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float32, scale: float = 3.0) -> torch.Tensor:
    """Random attention scores of ``shape`` (..., T_q, T_k)."""
    return (scale * torch.randn(shape, generator=generator(seed), dtype=torch.float64)).to(dtype)


def key_mask(shape: tuple[int, ...], seed: int, keep: float = 0.7) -> torch.Tensor:
    """Random bool mask of ``shape`` (True = may attend) with about ``keep`` of the keys kept."""
    return torch.rand(shape, generator=generator(seed + 1)) < keep


def qkv(batch: tuple[int, ...], t_q: int, t_k: int, d_k: int, d_v: int, seed: int,
        dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Queries (*batch, t_q, d_k), keys (*batch, t_k, d_k) and values (*batch, t_k, d_v)."""
    g = generator(seed)
    q = torch.randn(*batch, t_q, d_k, generator=g, dtype=torch.float64)
    k = torch.randn(*batch, t_k, d_k, generator=g, dtype=torch.float64)
    v = torch.randn(*batch, t_k, d_v, generator=g, dtype=torch.float64)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def sdpa_draw(seed: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random (q, k, v, mask) for scaled_dot_product_attention, (b, h, t_q, .) with b, h in 1..6, 2 to 6 queries,
    3 to 6 keys and widths d_k, d_v of 2 to 16. The first query keeps the first two keys and not the last, and the
    last query keeps none, so that every draw tells a wrong scale, a wrong axis, a mask applied late or a fully
    masked row that is not all zeros from the right answer (one key, d_k = 1 or a mask that keeps everything would
    not)."""
    g = generator(seed + 10)
    b, h = (int(n) for n in torch.randint(1, 7, (2,), generator=g))
    t_q = int(torch.randint(2, 7, (1,), generator=g))
    t_k = int(torch.randint(3, 7, (1,), generator=g))
    d_k, d_v = (int(n) for n in torch.randint(2, 17, (2,), generator=g))
    q, k, v = qkv((b, h), t_q, t_k, d_k, d_v, seed, dtype)
    mask = key_mask((b, 1, t_q, t_k), seed, keep=0.6)
    mask[..., 0, :2] = True
    mask[..., 0, -1] = False
    mask[..., -1, :] = False
    return q, k, v, mask


def attention_state(d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """Weights for CausalSelfAttention: ``{query,key,value,proj}.weight`` (D, D) and ``.bias`` (D,)."""
    g = generator(seed)
    state = {}
    for name in ("query", "key", "value", "proj"):
        state[f"{name}.weight"] = (torch.randn(d_model, d_model, generator=g, dtype=torch.float64)
                                   / math.sqrt(d_model)).to(dtype)
        state[f"{name}.bias"] = (0.1 * torch.randn(d_model, generator=g, dtype=torch.float64)).to(dtype)
    return state


def inputs(batch: int, T: int, d_model: int, seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Token representations (batch, T, d_model)."""
    return torch.randn(batch, T, d_model, generator=generator(seed + 7), dtype=torch.float64).to(dtype)


def vectors(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Standard normal entries of ``shape`` (queries, keys, token embeddings)."""
    return torch.randn(shape, generator=generator(seed), dtype=torch.float64).to(dtype)


def at_real_positions(value: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    """The rows of a (B, T, ...) output at real positions ((N, ...), N the sum of lengths), or all of it without
    ``lengths``: outputs at padded positions are unspecified, so no test compares them. (With right padding and a
    causal mask no real position ever sees a pad, so ignoring ``lengths`` changes no output that means anything.)"""
    if lengths is None:
        return value
    return value[torch.arange(value.shape[1])[None, :] < lengths[:, None]]


def attention(impl, d_model: int, n_head: int, state: dict, *, dropout: float = 0.0, train: bool = False):
    """A CausalSelfAttention of ``impl`` holding ``state`` (its dtype), in train or eval mode."""
    return loaded(impl.masking.CausalSelfAttention(d_model, n_head, dropout), state, train)


def loaded(module, state: dict, train: bool = False):
    """``module``, a self-attention with the parameters of ``attention_state``, holding ``state`` (float64 when
    ``state`` is), in train or eval mode."""
    if state["proj.weight"].dtype == torch.float64:
        module.double()
    module.load_state_dict(state)
    module.train(train)
    return module


def assert_output_matches(got, expected: Expected, x: torch.Tensor, lengths: torch.Tensor | None = None) -> None:
    """A self-attention's output ``got`` for ``x`` (B, T, D) has x's shape and dtype and matches ``expected`` at every
    real position (every position without ``lengths``, (B,)): outputs at padded positions are unspecified."""
    assert_tensor(got, "the output", shape=tuple(x.shape), dtype=x.dtype)
    assert_close(at_real_positions(got, lengths), expected.map(lambda out: at_real_positions(out, lengths)),
                 "the output" + ("" if lengths is None else " at real (unpadded) positions"))


def assert_gradients_match(got: dict, expected: Expected, parts, names, *, each_parameter: bool = True) -> None:
    """``forward_backward``'s gradients ``got`` match ``expected``: the input's as one part, then each parameter of
    ``names`` as a part of weight 0.25 (or, without ``each_parameter``, all of them as one part)."""
    with parts("input gradient"):
        assert_close(got["input_grads"][0], expected["input_grads"][0], "the gradient of the input")
    if each_parameter:
        for name in names:
            with parts(f"gradient of {name}", weight=0.25):
                _assert_parameter_gradient(got, expected, name)
    else:
        with parts("parameter gradients"):
            for name in names:
                _assert_parameter_gradient(got, expected, name)


def _assert_parameter_gradient(got: dict, expected: Expected, name: str) -> None:
    value = got["param_grads"].get(name)
    assert value is not None, f"{name} received no gradient: is it used in forward (and not detached)?"
    assert_close(value, expected["param_grads"][name], f"the gradient of {name}")


def assert_causal(module, x: torch.Tensor, seed: int) -> None:
    """Changing the tokens from position t on never changes the outputs before t (``module``: the student's)."""
    base = module(x)
    B, T, D = x.shape
    assert_tensor(base, "the output", shape=(B, T, D), dtype=x.dtype)
    for t in sorted({1, T // 2, T - 1}):
        changed = x.clone()
        changed[:, t:] = vectors((B, T - t, D), seed + t, x.dtype)
        assert_close(module(changed)[:, :t], base[:, :t],
                     f"the outputs before position {t} after changing the tokens from position {t} on (they must "
                     "not change: position i may only attend to positions <= i)")


def assert_dropout(student, oracle, parts, build, x: torch.Tensor) -> None:
    """A self-attention with dropout 0.5 drops at both sites its docstring names, in training only; ``build(impl,
    dropout=, train=)`` makes it (holding the test's weights) and ``x`` (B, T, D) is its input.

    Three parts. Eval mode must give the reference's output without dropout, so a deterministic but wrong module earns
    nothing there; the training parts count only once it does. Each site is then observed on its own, since one check
    that either site satisfies passes a module that drops the other: dropout on the output (``resid_dropout``)
    zeroes whole output entries, about half of them; dropout on the attention weights (``attn_dropout``) changes the
    entries that survive, which dropout on the output alone leaves at exactly twice their eval-mode value."""

    def evaluated(impl):
        return build(impl, dropout=0.5, train=False)(x)

    def seeded(impl):
        module = build(impl, dropout=0.5, train=False)
        torch.manual_seed(0)
        return module(x)

    def trained():
        student.seed(0)
        output = build(student, dropout=0.5, train=True)(x)
        assert_tensor(output, "the training-mode output", shape=tuple(x.shape), dtype=x.dtype)
        return output

    right = []
    with parts("eval mode ignores dropout"):
        module = build(student, dropout=0.5, train=False)
        student.seed(0)  # after building, as in seeded: building draws the initial weights
        first, second = module(x), module(x)
        try:
            assert_close(first, second, "two eval-mode outputs for the same input")
            assert_close(first, oracle(evaluated), "the eval-mode output with dropout=0.5 (it must equal the "
                         "output without dropout)")
        except AssertionError:
            recognise(first, oracle(seeded))  # the same dropout masks as a known mistake's, if dropout stays on
            raise
        right.append(first)
    # Each training part calls the student first: a submission that does not load fails it with that reason alone,
    # which the report then says once, at its top.
    unchecked = "not checked until the eval-mode output is right (the part above)"
    with parts("training mode drops output entries (resid_dropout)", requires="eval mode ignores dropout"):
        zeros = float((trained() == 0).double().mean())
        assert 0.3 <= zeros <= 0.7, (
            f"with dropout=0.5 in training mode {zeros:.0%} of the output entries are exactly 0, where dropout on the "
            "output zeroes about half of them: apply self.resid_dropout to proj's output")
    with parts("training mode drops attention weights (attn_dropout)"):
        output = trained()
        assert right, unchecked
        kept = output != 0
        assert not torch.allclose(output[kept], 2 * right[0][kept], rtol=1e-4, atol=1e-5), (
            "with dropout=0.5 in training mode every output entry is either 0 or twice its eval-mode value, as "
            "dropout on the output alone gives: apply self.attn_dropout to the attention weights too (the dropout "
            "argument of scaled_dot_product_attention)")


# torch's words when code reads a value of a meta tensor (``bool``, ``int``, ``.item()``): the meta device holds shapes
# and no values, so code that checks its inputs' values (positions within the table, lengths within T), right on any
# real device, cannot run there; such a call is not judged on meta (a correct alternative met it: issue 44).
READS_VALUES = "cannot be called on meta tensors"


def meta_call(attr, *args):
    """``attr`` called with ``args`` on the ``meta`` device, or None where the code read a tensor's value there (which
    the meta device cannot answer: ``READS_VALUES``); anything else it raises stands."""
    try:
        return attr.on(torch.device("meta"))(*args)
    except StudentError as error:
        if READS_VALUES in error.error_message:
            return None
        raise


def assert_on_meta(got, name: str, shape: tuple) -> None:
    """``got``, computed from inputs on the ``meta`` device (a second device type on any machine), is a meta tensor
    of ``shape``: a tensor made on the default device, or kept from an earlier call, is on the CPU or raised. None
    (``meta_call``: the code read a value, which meta cannot give) is not judged."""
    if got is None:
        return
    assert isinstance(got, torch.Tensor) and got.is_meta, (
        f"{name} for inputs on the meta device is on {getattr(got, 'device', type(got).__name__)}: make every tensor "
        "on the inputs' device (device=x.device), never on the default one")
    assert_tensor(got, name, shape=shape)


def assert_unchanged(after: list, sent: dict, function: str) -> None:
    """The arguments as ``function``'s call left them in the worker (``RemoteAttr.with_inputs``) equal what was sent
    (``{name: tensor}``, in the order of the call's arguments)."""
    for got, (name, value) in zip(after, sent.items(), strict=True):
        assert isinstance(got, torch.Tensor) and got.shape == value.shape and torch.equal(got, value), (
            f"{function} changed its argument {name} in place: the caller may use it again (work on a new tensor: "
            "masked_fill instead of masked_fill_, x = x / s instead of x /= s)")
