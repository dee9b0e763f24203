"""Part 1, the warm-ups from the lectures: exact answers, checked numerically against the reference."""

import torch

from autograder.grading import assert_close, assert_rows_sum_to_one, assert_tensor, graded
from autograder.suites.attention import common

F64 = common.F64


def _q_keys(batch: tuple[int, ...], n: int, d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = common.generator(seed)
    return torch.randn(*batch, d, generator=g, dtype=F64), torch.randn(*batch, n, d, generator=g, dtype=F64)


@graded(points=3, covers=["dot_scores", "multiplicative_scores", "scaled_dot_scores"])
def test_scores(attention, oracle, parts):
    """Score functions: dot product, multiplicative q^T W k and scaled dot product"""
    q, keys = _q_keys((2, 3), 5, 4, seed=1)
    with parts("dot_scores on a (2, 3) batch of queries"):
        expected = oracle(lambda impl: impl.attention.dot_scores(q, keys))
        got = attention.dot_scores(q, keys)
        assert_tensor(got, "dot_scores(q, keys)", shape=(2, 3, 5), dtype=F64)
        assert_close(got, expected, "dot_scores(q, keys)")
    q_small = torch.randn(3, generator=common.generator(2), dtype=F64)
    W = torch.randn(3, 4, generator=common.generator(3), dtype=F64)  # d_q = 3, d_k = 4: not symmetric
    with parts("multiplicative_scores with a (3, 4) W"):
        expected = oracle(lambda impl: impl.attention.multiplicative_scores(q_small, W, keys[0, 0]))
        got = attention.multiplicative_scores(q_small, W, keys[0, 0])
        assert_tensor(got, "multiplicative_scores(q, W, keys)", shape=(5,), dtype=F64)
        assert_close(got, expected, "multiplicative_scores(q, W, keys)")
    q_wide, keys_wide = _q_keys((4,), 6, 16, seed=4)
    with parts("scaled_dot_scores with d_k = 16"):
        expected = oracle(lambda impl: impl.attention.scaled_dot_scores(q_wide, keys_wide))
        got = attention.scaled_dot_scores(q_wide, keys_wide)
        assert_tensor(got, "scaled_dot_scores(q, keys)", shape=(4, 6), dtype=F64)
        assert_close(got, expected, "scaled_dot_scores(q, keys)")


@graded(points=2, covers=["dot_product_attention", "dot_scores"])
def test_dot_product_attention(attention, oracle, parts):
    """dot_product_attention: weights over the keys and the weighted sum of the values"""
    cases = {"one query": ((), 4, 3, 2), "a (2, 3) batch of queries, keys and values": ((2, 3), 5, 4, 6)}
    for index, (label, (batch, n, d, d_v)) in enumerate(cases.items()):
        q, keys = _q_keys(batch, n, d, seed=10 + index)
        values = torch.randn(*batch, n, d_v, generator=common.generator(20 + index), dtype=F64)
        with parts(label):
            expected = oracle(lambda impl, q=q, k=keys, v=values: impl.attention.dot_product_attention(q, k, v))
            got = attention.dot_product_attention(q, keys, values)
            assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
            assert_tensor(got[0], "the output", shape=(*batch, d_v), dtype=F64)
            assert_tensor(got[1], "the weights", shape=(*batch, n), dtype=F64)
            assert_rows_sum_to_one(got[1])
            assert_close(got[1], expected[1], "the weights")
            assert_close(got[0], expected[0], "the output")


@graded(points=2, covers=["aaba", "dot_product_attention", "dot_scores"])
def test_aaba(attention, oracle, parts):
    """A A B A: scores, weights, output and plain average for q = [0, 1] and q = [0, 10]"""
    for scale in (1.0, 10.0):
        q = torch.tensor([0.0, scale], dtype=F64)
        with parts(f"q = [0, {scale:g}]"):
            expected = oracle(lambda impl, q=q: impl.attention.aaba(q))
            got = attention.aaba(q)
            assert isinstance(got, tuple) and len(got) == 4, "return a tuple (scores, weights, output, average)"
            for index, what in enumerate(("the scores", "the weights", "the output", "the plain average")):
                assert_close(got[index], expected[index], what)


@graded(points=2, covers=["smallest_scale"])
def test_smallest_scale(attention, oracle, parts):
    """smallest_scale: the scale that puts exactly weight p on B"""
    for p in (0.5, 0.9, 0.99):
        with parts(f"p = {p}"):
            expected = oracle(lambda impl, p=p: impl.attention.smallest_scale(p))
            got = common.number(attention.smallest_scale(p), f"smallest_scale({p})")
            assert_close(got, expected, f"smallest_scale({p})")


@graded(points=1, covers=["linear_weights"])
def test_linear_weights(attention, oracle):
    """linear_weights: scores divided by their sum over the last axis"""
    scores = 0.5 + torch.rand(3, 5, generator=common.generator(30), dtype=F64)
    expected = oracle(lambda impl: impl.attention.linear_weights(scores))
    got = attention.linear_weights(scores)
    assert_tensor(got, "linear_weights(scores)", shape=(3, 5), dtype=F64)
    assert_close(got, expected, "linear_weights(scores)")


@graded(points=1, covers=["linear_weights_failure"])
def test_linear_weights_failure(attention):
    """linear_weights_failure: scores whose linear weights are not valid attention weights"""
    scores = attention.linear_weights_failure()
    assert_tensor(scores, "linear_weights_failure()")
    assert scores.dim() == 1 and scores.numel() >= 2, "return a (n,) tensor of scores, n >= 2"
    assert bool(torch.isfinite(scores).all()), "return finite scores (a dot product is always finite)"
    weights = scores.double() / scores.double().sum()
    valid = bool(torch.isfinite(weights).all() and (weights >= 0).all() and (weights <= 1).all())
    assert not valid, (f"your scores {scores.tolist()} give linear weights {weights.tolist()}, which are a valid set "
                       "of weights; find scores (a dot product can be any real number) for which they are not")


@graded(points=3, covers=["self_attention"])
def test_self_attention(attention, oracle, parts):
    """self_attention: S = Q K^T, softmax over each query's keys, output A V"""
    g = common.generator(40)
    cases = {"T = 5, d = 4, d_k = 3, d_v = 2": ((), 5, 4, 3, 2), "a batch of 2 sequences": ((2,), 4, 3, 3, 5)}
    for label, (batch, T, d, d_k, d_v) in cases.items():
        X = torch.randn(*batch, T, d, generator=g, dtype=F64)
        Wq, Wk = torch.randn(d, d_k, generator=g, dtype=F64), torch.randn(d, d_k, generator=g, dtype=F64)
        Wv = torch.randn(d, d_v, generator=g, dtype=F64)
        with parts(label):
            expected = oracle(lambda impl, X=X, Wq=Wq, Wk=Wk, Wv=Wv: impl.attention.self_attention(X, Wq, Wk, Wv))
            got = attention.self_attention(X, Wq, Wk, Wv)
            assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
            assert_tensor(got[1], "the weights A", shape=(*batch, T, T), dtype=F64)
            assert_tensor(got[0], "the output", shape=(*batch, T, d_v), dtype=F64)
            assert_close(got[1], expected[1], "the weights A")
            assert_close(got[0], expected[0], "the output")


@graded(points=2, covers=["swap_x2_x3"])
def test_swap(attention, oracle):
    """swap_x2_x3: the weights follow the content, so x4' does not change"""
    x = torch.randn(4, 3, generator=common.generator(50), dtype=F64)
    weights = torch.tensor([0.1, 0.2, 0.6, 0.1], dtype=F64)
    expected = oracle(lambda impl: impl.attention.swap_x2_x3(x, weights))
    got = attention.swap_x2_x3(x, weights)
    assert isinstance(got, tuple) and len(got) == 3, "return a tuple (x4' before, the weights after, x4' after)"
    assert_close(got[0], expected[0], "x4' before the swap")
    assert_close(got[1], expected[1], "the weights after the swap")
    assert_close(got[2], expected[2], "x4' after the swap")
