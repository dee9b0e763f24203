"""rope_frequencies and apply_rope: the angle table, adjacent-pair rotations, and what makes RoPE relative."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.positions import common

LONG = 4096  # positions LONG..2 LONG - 1: a float32 angle there keeps about three decimals, so cos and sin must be
# taken of the float64 angles


@graded(points=2, covers=["rope_frequencies"])
def test_rope_frequencies_matches_reference(positions, oracle, parts):
    """rope_frequencies: entry [m, i] = m * base^(-2i/head_dim), m from 0 (float32 and float64, other bases)"""
    for head_dim, max_positions, base, dtype in [(8, 16, 10000.0, torch.float32), (16, 40, 10000.0, torch.float64),
                                                 (6, 5, 500.0, torch.float64)]:
        label = f"rope_frequencies({head_dim}, {max_positions}, base={base:g}, dtype={dtype})"
        with parts(label):
            got = positions.rope_frequencies(head_dim, max_positions, base, dtype=dtype)
            assert_tensor(got, label, shape=(max_positions, head_dim // 2), dtype=dtype)
            expected = oracle(lambda impl, a=(head_dim, max_positions, base), dtype=dtype:
                              impl.positions.rope_frequencies(*a, dtype=dtype))
            assert_close(got, expected, label)
    with parts("an odd head_dim raises a ValueError"):
        common.assert_raises_value_error(lambda: positions.rope_frequencies(7, 4), "rope_frequencies(7, 4)",
                                         "RoPE rotates pairs of features, so head_dim must be even")


@graded(points=3, covers=["apply_rope"])
def test_apply_rope_matches_reference(positions, oracle, parts):
    """apply_rope: rotates adjacent pairs (2i, 2i+1) like the reference, on (B, H, T, head_dim) inputs"""
    cases = [
        ("positions 0..T-1", (2, 3, 5, 8), torch.float32, None),
        ("positions 0..T-1", (2, 2, 6, 4), torch.float64, None),
        ("explicit positions (T,)", (2, 4, 6), torch.float64, common.positions_in((4,), 32, seed=400)),
        ("positions (B, 1, T), one per sequence and token", (2, 3, 4, 6), torch.float32,
         common.positions_in((2, 1, 4), 32, seed=401)),
        ("explicit positions far into a long context", (3, 5, 8), torch.float32,
         common.positions_in((5,), LONG, seed=402) + LONG),
    ]
    freqs = {dim: common.angle_table(dim, 2 * LONG if dim == 8 else 32, seed=dim) for dim in (4, 6, 8)}
    for index, (label, shape, dtype, where) in enumerate(cases):
        x = common.vectors(shape, seed=410 + index, dtype=dtype)
        table = freqs[shape[-1]]
        with parts(f"{label}, x {shape}, {dtype}"):
            got = positions.apply_rope(x, table, where)
            assert_tensor(got, "the rotated x", shape=shape, dtype=dtype)
            expected = oracle(lambda impl, x=x, table=table, where=where: impl.positions.apply_rope(x, table, where))
            assert_close(got, expected, "the rotated x")


@graded(points=3, covers=["apply_rope"])
def test_apply_rope_properties(positions, oracle, parts):
    """apply_rope: keeps norms, is the identity at position 0, scores depend only on m - n, one-token decoding"""
    table = common.angle_table(8, 64, seed=8)
    x = common.vectors((2, 3, 10, 8), seed=420, dtype=torch.float64)
    right = "rotates x like the reference"
    with parts(right):  # rotating the halves keeps every property below: they count once the rotation is right
        assert_close(positions.apply_rope(x, table), oracle(lambda impl: impl.positions.apply_rope(x, table)),
                     "the rotated x")
    with parts("norms are preserved", requires=right):
        common.assert_norms_preserved(positions, x, table)
    with parts("all positions 0 is the identity", requires=right):
        common.assert_identity_at_zero(positions, x, table)
    with parts("(R_m q) . (R_n k) depends only on m - n", requires=right):
        common.assert_relative(positions, x[0, 0], x[1, 1], table, shifts=(3, 17))
    with parts("decoding one token at position t equals row t of the full pass", requires=right):
        common.assert_decode_matches(positions, x, table, steps=(0, 4, 9))
    with parts("a position past the table raises a ValueError"):
        common.assert_raises_value_error(lambda: positions.apply_rope(common.vectors((70, 8), seed=421), table),
                                         "apply_rope on 70 positions with a 64-position table",
                                         "there is no angle for positions past max_positions")
    with parts("a table for another head width raises a ValueError"):
        common.assert_raises_value_error(lambda: positions.apply_rope(x, common.angle_table(6, 64, seed=6)),
                                         "apply_rope on head_dim 8 with a table of 3 angles per position",
                                         "each pair of features needs its own angle: build freqs for the head width")
