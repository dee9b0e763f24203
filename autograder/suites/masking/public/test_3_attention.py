"""Scaled dot-product attention and the head reshapes."""

import math

import torch

from autograder.grading import assert_close, assert_rows_sum_to_one, assert_tensor, graded
from autograder.suites.masking import common


@graded(points=3, covers=["scaled_dot_product_attention", "masked_softmax"])
def test_sdpa_matches_reference(student, masking, oracle, parts):
    """scaled_dot_product_attention: output and weights match the reference"""
    cases = {
        "no mask": ((2,), 4, 4, 8, 8, None),
        "causal mask, heads": ((2, 3), 5, 5, 4, 4, torch.ones(5, 5, dtype=torch.bool).tril()),
        "cross-attention, T_q != T_k, d_v != d_k": ((3,), 2, 6, 8, 5, common.key_mask((3, 2, 6), seed=9, keep=0.8)),
    }
    for index, (label, (batch, t_q, t_k, d_k, d_v, mask)) in enumerate(cases.items()):
        q, k, v = common.qkv(batch, t_q, t_k, d_k, d_v, seed=10 + index)
        with parts(label):
            got = masking.scaled_dot_product_attention(q, k, v, mask)
            expected = oracle(lambda impl, q=q, k=k, v=v, m=mask: impl.masking.scaled_dot_product_attention(q, k, v, m))
            assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
            assert_tensor(got[0], "the output", shape=(*batch, t_q, d_v))
            assert_close(got[1], expected[1], "the weights")
            assert_close(got[0], expected[0], "the output")
    q, k, v = common.qkv((2,), 6, 6, 8, 8, seed=13)
    with parts("with dropout: the weights returned are those before it, and it applies to the weights that multiply v"):
        dropout = masking.torch.nn.Dropout(0.5)
        student.seed(0)
        got = masking.scaled_dot_product_attention(q, k, v, None, dropout)
        expected = oracle(lambda impl: impl.masking.scaled_dot_product_attention(q, k, v, None))

        def seeded(impl):
            dropout = torch.nn.Dropout(0.5)
            torch.manual_seed(0)
            return impl.masking.scaled_dot_product_attention(q, k, v, None, dropout)

        with_dropout = oracle(seeded)
        assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
        assert_close(got[1], with_dropout[1], "the weights returned with dropout=Dropout(0.5) (the weights before "
                     "dropout, so that they can be inspected)")
        assert_tensor(got[0], "the output", shape=(2, 6, 8))
        assert not torch.allclose(got[0], expected.value[0]), (
            "with dropout=Dropout(0.5) in training mode the output equals the output without dropout: apply the "
            "dropout to the weights before they multiply v")
        assert_close(got[0], with_dropout[0], "the output with dropout=Dropout(0.5) after torch.manual_seed(0) (it "
                     "must equal the reference's with the same dropout mask: call dropout once, on the weights, "
                     "before they multiply v)")


@graded(points=1, covers=["scaled_dot_product_attention"])
def test_sdpa_scaling(masking):
    """scaled_dot_product_attention: scores are divided by sqrt(d_k)"""
    d_k = 64
    q, k, v = common.qkv((1,), 1, 3, d_k, 2, seed=11)
    _, weights = masking.scaled_dot_product_attention(q, k, v, None)
    scores = q @ k.transpose(-2, -1)
    assert_tensor(weights, "the weights", shape=(1, 1, 3))
    expected = torch.softmax(scores / math.sqrt(d_k), dim=-1)
    if torch.allclose(weights, torch.softmax(scores, dim=-1), atol=1e-5):
        raise AssertionError("the weights equal softmax(q k^T): divide the scores by sqrt(d_k) first")
    assert_close(weights, expected, "the weights")
    assert_rows_sum_to_one(weights)


@graded(points=2, covers=["split_heads", "merge_heads"])
def test_heads(masking, oracle, parts):
    """split_heads and merge_heads: head h holds feature block h, and merge undoes split"""
    x = common.inputs(2, 5, 12, seed=12)
    with parts("split_heads shape and values"):
        got = masking.split_heads(x, 3)
        assert_tensor(got, "split_heads(x, 3)", shape=(2, 3, 5, 4))
        assert_close(got, oracle(lambda impl: impl.masking.split_heads(x, 3)), "split_heads(x, 3)")
    y = torch.randn(2, 3, 5, 4, generator=common.generator(13))
    with parts("merge_heads shape and values"):
        got = masking.merge_heads(y)
        assert_tensor(got, "merge_heads(y)", shape=(2, 5, 12))
        assert_close(got, oracle(lambda impl: impl.masking.merge_heads(y)), "merge_heads(y)")
    with parts("merge_heads(split_heads(x)) == x"):
        split = masking.split_heads(x, 4)
        assert_close(masking.merge_heads(split), x, "merge_heads(split_heads(x, 4))")
