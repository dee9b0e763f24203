"""Part 4: sampling keys, the single-head query, and the Monte Carlo experiment (the grader runs its own)."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.attention import common, properties

F64 = common.F64


@graded(points=3, covers=["sample_keys"])
def test_sample_keys(student, attention, parts):
    """sample_keys: shape, means, covariances, independent keys, and all randomness from rng"""
    n, d, S = 3, 4, 20_000
    mu = torch.randn(n, d, generator=common.generator(60), dtype=F64)
    sigmas = torch.stack([common.spd(d, 61 + i) for i in range(n)])
    keys = None
    with parts(f"{S} samples of {n} keys: shape ({S}, {n}, {d}), float64"):
        keys = attention.sample_keys(mu, sigmas, attention.make_rng(1), S)
        assert_tensor(keys, "sample_keys(mu, sigmas, rng, num_samples)", shape=(S, n, d), dtype=F64)
    with parts("means, covariances and independence"):
        assert keys is not None and tuple(keys.shape) == (S, n, d), "needs samples of the right shape (see above)"
        properties.check_key_statistics(keys, mu, sigmas)
    with parts("the generator rng decides the keys"):
        properties.check_generator_is_used(student, attention, mu, sigmas)


@graded(points=2, covers=["single_head_query"])
def test_single_head_query(attention, parts):
    """single_head_query: c stays on (v_a + v_b) / 2 in case (i), measured over 10000 random key sets"""
    for n, d, a, b, seed in [(5, 8, 1, 3, 70), (3, 3, 0, 2, 71), (8, 10, 6, 1, 72)]:
        with parts(f"n = {n}, d = {d}, a = {a}, b = {b}"):
            properties.check_single_head(attention, n, d, a, b, seed)


@graded(points=2, covers=["attend_heads", "dot_product_attention"])
def test_attend_heads(attention, oracle, parts):
    """attend_heads: each head's weights over the keys, and the average of the heads' outputs"""
    g = common.generator(80)
    values = torch.randn(4, 3, generator=g, dtype=F64)
    for H, batch in [(1, (6,)), (3, (2, 5))]:
        queries = torch.randn(H, 5, generator=g, dtype=F64)
        keys = torch.randn(*batch, 4, 5, generator=g, dtype=F64)
        with parts(f"{H} head(s), keys of shape {(*batch, 4, 5)}"):
            expected = oracle(lambda impl, q=queries, k=keys: impl.attention.attend_heads(q, k, values))
            got = attention.attend_heads(queries, keys, values)
            assert isinstance(got, tuple) and len(got) == 2, "return a tuple (outputs, weights)"
            assert_tensor(got[1], "the weights", shape=(*batch, H, 4), dtype=F64)
            assert_tensor(got[0], "the outputs", shape=(*batch, 3), dtype=F64)
            assert_close(got[1], expected[1], "the weights")
            assert_close(got[0], expected[0], "the outputs")


@graded(points=1, covers=["spread"])
def test_spread(attention, oracle):
    """spread: the root-mean-square distance of the outputs from the target"""
    outputs = torch.randn(50, 3, generator=common.generator(90), dtype=F64)
    target = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    expected = oracle(lambda impl: impl.attention.spread(outputs, target))
    got = common.number(attention.spread(outputs, target), "spread(outputs, target)")
    assert_close(got, expected, "spread(outputs, target)")


@graded(points=2, covers=["experiment", "sample_keys", "attend_heads", "spread"])
def test_experiment(attention, parts):
    """experiment: uses every sample, and its spread and weights agree with the grader's own Monte Carlo"""
    mu = common.orthonormal(4, 6, 100)
    queries = torch.stack([6.0 * mu[0], 6.0 * mu[2]])  # two heads that copy keys 0 and 2
    properties.check_experiment(attention, queries, 4, 6, 0, 2, perturbed=True, num_samples=3000, seed=100,
                                parts=parts)


@graded(points=2, covers=["single_head_query", "experiment"])
def test_reported_single_head(attention, oracle, parts):
    """The notebook's single-head spreads (i) and (ii) match the grader's Monte Carlo with your query"""
    properties.check_report(attention, oracle, parts, ("spread_single_i", "spread_single_ii"),
                            lambda mu, a, b: common.query(attention.single_head_query(mu, a, b), mu.shape[1],
                                                          "single_head_query(MU, A_INDEX, B_INDEX)")[None], seed=110)
