"""attention_ffn and permute_check: without positions the layer is permutation-equivariant, with them it is not."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.positions import common

COVERS = ["attention_ffn", "scaled_dot_product_attention", "masked_softmax"]


@graded(points=2, covers=COVERS, builds_on=["masking"])
def test_attention_ffn_matches_reference(positions, oracle, parts):
    """attention_ffn: matches the reference (float32 and float64, with and without a batch dimension)"""
    for index, (batch, T, D, F, dtype) in enumerate([((2,), 5, 8, 16, torch.float32), ((), 4, 6, 12, torch.float64),
                                                     ((2, 3), 3, 4, 8, torch.float64)]):
        x = common.vectors((*batch, T, D), seed=100 + index, dtype=dtype)
        weights = common.ffn_weights(D, F, seed=100 + index, dtype=dtype)
        with parts(f"x {tuple(x.shape)}, {dtype}"):
            got = positions.attention_ffn(x, weights)
            assert_tensor(got, "the output", shape=tuple(x.shape), dtype=dtype)
            assert_close(got, oracle(lambda impl, x=x, w=weights: impl.positions.attention_ffn(x, w)), "the output")


@graded(points=2, covers=[*COVERS, "permute_check"], builds_on=["masking"])
def test_permute_check(positions, oracle, parts):
    """permute_check: about 0 without positions, the reference's value with position embeddings"""
    x = common.vectors((2, 6, 8), seed=110, dtype=torch.float64)
    weights = common.ffn_weights(8, 16, seed=110, dtype=torch.float64)
    perm = common.permutation(6, seed=110)
    with parts("without positions"):
        got = positions.permute_check(x, perm, weights)
        assert isinstance(got, float), f"return a Python float (use float(...)), not a {type(got).__name__}"
        expected = oracle(lambda impl: impl.positions.permute_check(x, perm, weights))
        assert_close(got, expected, "permute_check without positions (it should be 0 up to rounding)", atol=1e-9)
    table = common.vectors((6, 8), seed=111, dtype=torch.float64)
    with parts("with position embeddings"):
        got = positions.permute_check(x, perm, weights, table)
        expected = oracle(lambda impl: impl.positions.permute_check(x, perm, weights, table))
        assert_close(got, expected, "permute_check with positions", rtol=1e-6, atol=1e-9)


@graded(points=1, covers=COVERS, builds_on=["masking"])
def test_equivariance_property(positions, oracle, parts):
    """attention_ffn: Z(PX) = P Z(X) without positions, and not once positions are added"""
    x = common.vectors((3, 7, 8), seed=120, dtype=torch.float64)
    weights = common.ffn_weights(8, 12, seed=120, dtype=torch.float64)
    perm = common.permutation(7, seed=120)
    right = "attention_ffn matches the reference"
    with parts(right):  # a wrong layer (x itself, say) is equivariant too: the properties count once Z is right
        assert_close(positions.attention_ffn(x, weights),
                     oracle(lambda impl: impl.positions.attention_ffn(x, weights)), "attention_ffn(x, weights)")
    with parts("equivariant without positions", requires=right):
        common.assert_equivariant(positions, x, perm, weights)
    with parts("not equivariant with positions", requires=right):
        table = common.vectors((7, 8), seed=121, dtype=torch.float64)
        common.assert_not_equivariant(positions, x, perm, weights, table)
