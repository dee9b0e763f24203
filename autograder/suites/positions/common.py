"""Inputs shared by the positions tests. Every builder is deterministic in its seed.

A test computes the student's value with ``fn(student)`` and the expected one with ``oracle(fn)``: ``fn``
receives either the student proxy or a local implementation, both with ``.positions``, ``.masking`` and
``.positions_notebook``. Generators, attention weights, token inputs and the checks of a self-attention's output,
gradients and causality come from the masking suite.
"""

import math

import torch

from autograder.grading import StudentError, assert_close, assert_tensor, describe_type
from autograder.suites.masking.common import (
    assert_causal,
    assert_dropout,
    assert_gradients_match,
    assert_on_meta,
    assert_output_matches,
    assert_unchanged,
    attention_state,
    generator,
    inputs,
    loaded,
    meta_call,
    vectors,
)

__all__ = ["attention_state", "generator", "inputs", "assert_on_meta", "meta_call", "assert_unchanged",
           "assert_output_matches", "assert_gradients_match",
           "assert_causal", "assert_dropout", "ffn_weights", "permutation", "vectors", "positions_in",
           "learned", "rotary", "plain_attention", "random_dims", "assert_equivariant", "assert_not_equivariant",
           "assert_raises_value_error", "assert_shift_property",
           "angle_table", "assert_norms_preserved", "assert_identity_at_zero", "assert_relative",
           "assert_decode_matches", "assert_values_unrotated"]


def ffn_weights(d_model: int, d_ff: int, seed: int, dtype: torch.dtype = torch.float32) -> dict[str, torch.Tensor]:
    """Weights of ``attention_ffn``: query, key, value (D, D), ff_in (D, F), ff_out (F, D)."""
    g = generator(seed)
    shapes = {"query": (d_model, d_model), "key": (d_model, d_model), "value": (d_model, d_model),
              "ff_in": (d_model, d_ff), "ff_out": (d_ff, d_model)}
    return {name: (torch.randn(*shape, generator=g, dtype=torch.float64) / math.sqrt(shape[0])).to(dtype)
            for name, shape in shapes.items()}


def permutation(T: int, seed: int) -> torch.Tensor:
    """A (T,) permutation of 0..T-1 that moves every token (a cyclic shift composed with a random order)."""
    order = torch.randperm(T, generator=generator(seed))
    return order[torch.roll(torch.arange(T), 1)][torch.argsort(order)]


def positions_in(shape: tuple[int, ...], limit: int, seed: int) -> torch.Tensor:
    """Random int64 positions in 0..limit-1 of ``shape``."""
    return torch.randint(0, limit, shape, generator=generator(seed))


def angle_table(head_dim: int, max_positions: int, seed: int) -> torch.Tensor:
    """A float64 (max_positions, head_dim // 2) table of angles m * theta_i, with random rates theta_i.

    Any table of this form makes RoPE relative; random rates also catch code that ignores ``freqs``.
    """
    theta = 0.05 + 1.2 * torch.rand(head_dim // 2, generator=generator(seed), dtype=torch.float64)
    return torch.outer(torch.arange(max_positions, dtype=torch.float64), theta)


def random_dims(seed: int, count: int, low: int, high: int) -> list[int]:
    """``count`` integers in low..high-1 drawn from ``seed``."""
    return [int(v) for v in torch.randint(low, high, (count,), generator=generator(seed))]


def learned(impl, block_size: int, d_model: int, weight: torch.Tensor):
    """A LearnedPositions of ``impl`` holding ``weight`` (its dtype)."""
    module = impl.positions.LearnedPositions(block_size, d_model)
    if weight.dtype == torch.float64:
        module.double()
    module.load_state_dict({"weight": weight})
    return module


def rotary(impl, d_model: int, n_head: int, state: dict, *, dropout: float = 0.0, train: bool = False,
           max_positions: int = 2048, base: float = 10000.0):
    """A RotaryCausalSelfAttention of ``impl`` holding ``state`` (its dtype), in train or eval mode."""
    module = impl.positions.RotaryCausalSelfAttention(d_model, n_head, dropout, max_positions, base)
    return loaded(module, state, train)


def rotary_draw(seed: int, dtype: torch.dtype) -> tuple[int, int, int, torch.Tensor]:
    """An unseen (n_head, d_model, T, lengths (3,)) for RotaryCausalSelfAttention: 1 to 5 heads, and in float32 head
    widths 2 to 10 and 4 to 8 positions; in float64 widths 6 to 14 and 28 to 32 positions, one sequence unpadded, so
    that the slower rotations of a long sequence show an angle table kept in float32 under any secret."""
    n_head, half, T = random_dims(seed, 3, 1, 6)
    if dtype == torch.float64:
        half, T = half + 2, T + 24
    T += 3
    lengths = torch.randint(1, T + 1, (3,), generator=generator(seed))
    lengths[0] = T
    return n_head, 2 * half * n_head, T, lengths


def plain_attention(impl, d_model: int, n_head: int, state: dict):
    """The same weights in ``impl``'s (carried) masking.CausalSelfAttention, eval mode."""
    return loaded(impl.masking.CausalSelfAttention(d_model, n_head, 0.0), state, False)


def assert_equivariant(positions, x: torch.Tensor, perm: torch.Tensor, weights: dict) -> None:
    """The student's attention_ffn satisfies Z(PX) = P Z(X) on x (..., T, D)."""
    permute_first = positions.attention_ffn(x[..., perm, :], weights)
    permute_after = positions.attention_ffn(x, weights)
    assert_tensor(permute_after, "attention_ffn(x)", shape=tuple(x.shape), dtype=x.dtype)
    assert_close(permute_first, permute_after[..., perm, :],
                 "attention_ffn(P X) compared with P attention_ffn(X) (without positions they must be equal: is "
                 "there a mask, or a step that depends on where a token is?)")


def assert_not_equivariant(positions, x: torch.Tensor, perm: torch.Tensor, weights: dict,
                           table: torch.Tensor) -> None:
    """With position embeddings ``table`` (T, D) added after permuting, the student's layer is not equivariant."""
    permute_first = positions.attention_ffn(x[..., perm, :] + table, weights)
    permute_after = positions.attention_ffn(x + table, weights)
    assert_tensor(permute_after, "attention_ffn(x + E)", shape=tuple(x.shape), dtype=x.dtype)
    gap = float((permute_first - permute_after[..., perm, :]).abs().max())
    assert gap > 1e-3, (f"with position embeddings E added, attention_ffn(P X + E) equals P attention_ffn(X + E) "
                        f"(largest difference {gap:.2g}): the output should depend on where each token is")


def assert_raises_value_error(call, label: str, why: str, mention: str | None = None) -> None:
    """``call()`` (a call into the student's code) must raise ValueError, whose message contains ``mention``."""
    try:
        out = call()
    except StudentError as exc:
        assert exc.error_type == "ValueError", f"{label} raised {exc.error_type}; raise a ValueError: {why}"
        assert mention is None or mention in exc.error_message, (
            f"{label} raised ValueError({exc.error_message!r}); the message should name the limit, {mention}")
    else:
        raise AssertionError(f"{label} returned {describe_type(out)}; raise a ValueError instead: {why}")


def assert_shift_property(positions, T: int, k: int, d: int) -> None:
    """The student's tables satisfy Phi[t + k] = Phi[t] M_k for t = 0..T-1 (t + k >= 0), in float64."""
    first = max(0, -k)
    table = positions.sinusoidal(T + abs(k), d, dtype=torch.float64)
    operator = positions.shift_operator(k, d, dtype=torch.float64)
    assert_tensor(table, f"sinusoidal({T + abs(k)}, {d})", shape=(T + abs(k), d), dtype=torch.float64)
    assert_tensor(operator, f"shift_operator({k}, {d})", shape=(d, d), dtype=torch.float64)
    rows = torch.arange(first, first + T - abs(k))
    assert_close(table[rows] @ operator, table[rows + k],
                 f"Phi[t] @ shift_operator({k}, {d}) compared with Phi[t{k:+d}] (rows of your sinusoidal table; "
                 "check the sin/cos order in both functions and the sign of the off-diagonal entries)")


def assert_norms_preserved(positions, x: torch.Tensor, table: torch.Tensor) -> None:
    """The student's apply_rope keeps the norm of every vector of x (..., T, head_dim)."""
    rotated = positions.apply_rope(x, table)
    assert_tensor(rotated, "apply_rope(x, freqs)", shape=tuple(x.shape), dtype=x.dtype)
    assert_close(rotated.norm(dim=-1), x.norm(dim=-1),
                 "the norms of the rotated vectors (a rotation keeps lengths: each pair must be rotated as "
                 "(a cos - b sin, a sin + b cos))")


def assert_identity_at_zero(positions, x: torch.Tensor, table: torch.Tensor) -> None:
    """With every position 0, the student's apply_rope returns x."""
    zeros = torch.zeros(x.shape[-2], dtype=torch.int64)
    assert_close(positions.apply_rope(x, table, zeros), x,
                 "apply_rope with every position 0 (a rotation by angle 0 must leave x unchanged; do positions "
                 "start at 0?)")


def assert_relative(positions, q: torch.Tensor, k: torch.Tensor, table: torch.Tensor, shifts: tuple[int, ...]) -> None:
    """Scores (R_m q) . (R_n k) of the student's apply_rope do not change when m and n move together, and do
    change with m - n. q and k are (head_dim,) vectors."""
    count = 10
    queries, keys = q.expand(count, -1), k.expand(count, -1)
    m = torch.arange(count)
    n = torch.flip(m, [0])

    def scores(shift: int) -> torch.Tensor:
        rotated_q = positions.apply_rope(queries, table, m + shift)
        rotated_k = positions.apply_rope(keys, table, n + shift)
        assert_tensor(rotated_q, "apply_rope(q, freqs, positions)", shape=(count, q.shape[-1]), dtype=q.dtype)
        return (rotated_q * rotated_k).sum(-1)

    base = scores(0)
    for shift in shifts:
        assert_close(scores(shift), base, f"the scores (R_m q) . (R_n k) after moving both positions by {shift} "
                     "(they must depend only on m - n: rotate queries and keys with the same angles per position)")
    assert not torch.allclose(base, (q * k).sum(-1).expand(count)), (
        "the scores (R_m q) . (R_n k) equal q . k for every offset m - n: apply_rope does not rotate")


def assert_decode_matches(positions, x: torch.Tensor, table: torch.Tensor, steps: tuple[int, ...]) -> None:
    """Rotating one token at position t (positions=[t]) equals row t of rotating the whole sequence."""
    full = positions.apply_rope(x, table)
    assert_tensor(full, "apply_rope(x, freqs)", shape=tuple(x.shape), dtype=x.dtype)
    for t in steps:
        single = positions.apply_rope(x[..., t:t + 1, :], table, torch.tensor([t]))
        assert_close(single, full[..., t:t + 1, :],
                     f"apply_rope on the token at position {t} alone (positions=[{t}]) compared with row {t} of the "
                     "full pass (use the positions argument when it is given)")


def assert_values_unrotated(student, state: dict, x: torch.Tensor, n_head: int = 4) -> None:
    """With zero query weights every score is 0, so RoPE cannot matter: the student's rotary attention must equal
    their masking.CausalSelfAttention with the same weights, unless the values are rotated too."""
    d_model = x.shape[-1]
    rotary_out = rotary(student, d_model, n_head, state)(x)
    plain_out = plain_attention(student, d_model, n_head, state)(x)
    assert_tensor(rotary_out, "the output", shape=tuple(x.shape), dtype=x.dtype)
    assert_close(rotary_out, plain_out,
                 "the output with zero query weights, compared with your masking.CausalSelfAttention (every score "
                 "is 0, so only the values matter: are the values rotated? RoPE applies to queries and keys only)")
