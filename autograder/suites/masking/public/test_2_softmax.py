"""masked_softmax: values, exact zeros, empty rows and numerical stability."""

import torch

from autograder.grading import assert_close, assert_rows_sum_to_one, assert_tensor, graded, recognise
from autograder.suites.masking import common


@graded(points=3, covers=["masked_softmax"])
def test_matches_reference(masking, oracle, parts):
    """masked_softmax: matches the reference (float32 and float64, broadcast masks, no mask)"""
    for dtype in (torch.float32, torch.float64):
        scores = common.scores((2, 3, 4, 6), seed=1, dtype=dtype)
        mask = common.key_mask((2, 1, 4, 6), seed=1)
        with parts(f"{dtype}, mask broadcast over heads"):
            got = masking.masked_softmax(scores, mask)
            assert_close(got, oracle(lambda impl, s=scores, m=mask: impl.masking.masked_softmax(s, m)), "the weights")
    scores = common.scores((3, 5), seed=2)
    with parts("mask=None is an ordinary softmax"):
        got = masking.masked_softmax(scores, None)
        assert_close(got, oracle(lambda impl: impl.masking.masked_softmax(scores, None)), "the weights")


@graded(points=2, covers=["masked_softmax"])
def test_rows_and_zeros(masking, oracle, parts):
    """masked_softmax: rows sum to one and masked keys get exactly zero weight"""
    scores = common.scores((4, 7, 7), seed=3)
    mask = common.key_mask((4, 7, 7), seed=3)
    mask[..., 0] = True  # every row keeps at least one key
    weights = masking.masked_softmax(scores, mask)
    assert_tensor(weights, "the weights", shape=tuple(scores.shape), dtype=scores.dtype)
    right = "the weights match the reference"
    with parts(right):  # a softmax over the wrong keys sums to one too: the properties count once it is right
        assert_close(weights, oracle(lambda impl: impl.masking.masked_softmax(scores, mask)), "the weights")
    with parts("rows sum to one", requires=right):
        assert_rows_sum_to_one(weights)
    with parts("masked keys get exactly 0", requires=right):
        leaked = weights[~mask]
        assert bool((leaked == 0).all()), (
            f"{int((leaked != 0).sum())} masked entries have nonzero weight (largest {float(leaked.abs().max()):.3g}); "
            "masked keys must get exactly 0: fill their scores with -inf before the softmax, not after")
    with parts("weights are finite and non-negative", requires=right):
        assert bool(torch.isfinite(weights).all()), "some weights are NaN or infinite"
        assert not bool((weights < 0).any()), "some weights are negative"


@graded(points=2, covers=["masked_softmax"])
def test_fully_masked_rows(masking, oracle):
    """masked_softmax: a row whose keys are all masked is all zeros, not NaN"""
    scores = common.scores((2, 4, 5), seed=4)
    mask = common.key_mask((2, 4, 5), seed=4)
    mask[0, 1] = False
    mask[1, 3] = False
    weights = masking.masked_softmax(scores, mask)
    assert_tensor(weights, "the weights", shape=(2, 4, 5))
    expected = oracle(lambda impl: impl.masking.masked_softmax(scores, mask))
    if not bool(torch.isfinite(weights).all()):
        recognise(weights, expected)
        raise AssertionError("a row with every key masked produced NaN or inf; return an all-zero row there (there "
                             "is nothing to attend to)")
    assert_close(weights, expected, "the weights")


@graded(points=2, covers=["masked_softmax"])
def test_large_scores(masking, oracle, parts):
    """masked_softmax: stable for large scores (no overflow to inf or NaN)"""
    for scale in (1e3, 1e5):
        scores = common.scores((3, 6, 6), seed=5, scale=scale)
        mask = common.key_mask((3, 6, 6), seed=5)
        mask[..., 0] = True
        with parts(f"scores of size about {scale:g}"):
            weights = masking.masked_softmax(scores, mask)
            assert_tensor(weights, "the weights")
            assert bool(torch.isfinite(weights).all()), (
                "large scores gave NaN or inf: subtract each row's maximum (over kept keys) before exp")
            expected = oracle(lambda impl, s=scores, m=mask: impl.masking.masked_softmax(s, m))
            assert_close(weights, expected, "the weights")
