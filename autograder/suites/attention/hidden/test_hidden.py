"""Hidden tests: the same questions on inputs drawn from the secret seed, and the multiple-choice answers.

These never ship to students. Their inputs come from the ``seed`` fixture, which mixes in the term's
secret, so neither the numbers nor the designs can be tuned to the public cases.
"""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.attention import common, properties

F64 = common.F64


def _randn(g: torch.Generator, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=g, dtype=F64)


@graded(points=2, covers=["dot_scores", "multiplicative_scores", "scaled_dot_scores"])
def test_scores_random(student, oracle, parts, seed):
    """Score functions on unseen shapes and widths"""
    g = common.generator(seed)
    n, d, d_q, batch = *common.integers(seed, 2, 9, 3), common.integers(seed + 1, 1, 4, 1)[0]
    q, keys, W = _randn(g, batch, d), _randn(g, batch, n, d), _randn(g, d_q, d)
    q_small = _randn(g, d_q)
    calls = {"dot_scores": (lambda impl: impl.attention.dot_scores(q, keys), (batch, n)),
             "multiplicative_scores": (lambda impl: impl.attention.multiplicative_scores(q_small, W, keys), (batch, n)),
             "scaled_dot_scores": (lambda impl: impl.attention.scaled_dot_scores(q, keys), (batch, n))}
    for name, (call, shape) in calls.items():
        with parts(f"{name}, n = {n}, d = {d}"):
            expected = oracle(call)
            got = call(student)
            assert_tensor(got, name, shape=shape, dtype=F64)
            assert_close(got, expected, name)


@graded(points=3, covers=["dot_product_attention", "aaba", "self_attention", "dot_scores"])
def test_attention_random(attention, oracle, parts, seed):
    """dot_product_attention, A A B A and self_attention on unseen inputs"""
    g = common.generator(seed)
    n, d, d_v, T = common.integers(seed, 2, 8, 4)
    q, keys, values = _randn(g, 3, d), _randn(g, 3, n, d), _randn(g, n, d_v)
    with parts(f"dot_product_attention, {n} keys of width {d}, values shared by a batch of 3"):
        expected = oracle(lambda impl: impl.attention.dot_product_attention(q, keys, values))
        got = attention.dot_product_attention(q, keys, values)
        assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
        assert_close(got[1], expected[1], "the weights")
        assert_close(got[0], expected[0], "the output")
    q_aaba = 3 * _randn(g, 2)
    with parts(f"aaba(q = {[round(v, 3) for v in q_aaba.tolist()]})"):
        expected = oracle(lambda impl: impl.attention.aaba(q_aaba))
        got = attention.aaba(q_aaba)
        assert isinstance(got, tuple) and len(got) == 4, "return a tuple (scores, weights, output, average)"
        for index, what in enumerate(("the scores", "the weights", "the output", "the plain average")):
            assert_close(got[index], expected[index], what)
    X, Wq, Wk, Wv = _randn(g, T, d), _randn(g, d, d_v), _randn(g, d, d_v), _randn(g, d, n)
    with parts(f"self_attention, T = {T}"):
        expected = oracle(lambda impl: impl.attention.self_attention(X, Wq, Wk, Wv))
        got = attention.self_attention(X, Wq, Wk, Wv)
        assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
        assert_close(got[1], expected[1], "the weights A")
        assert_close(got[0], expected[0], "the output")


@graded(points=2, covers=["smallest_scale", "linear_weights", "swap_x2_x3"])
def test_small_answers_random(attention, oracle, parts, seed):
    """smallest_scale, linear_weights and swap_x2_x3 on unseen inputs"""
    g = common.generator(seed)
    p = float(0.05 + 0.94 * torch.rand(1, generator=g, dtype=F64))
    with parts(f"smallest_scale({p:.4f})"):
        expected = oracle(lambda impl: impl.attention.smallest_scale(p))
        assert_close(common.number(attention.smallest_scale(p), "smallest_scale(p)"), expected, "smallest_scale(p)")
    scores = 0.1 + torch.rand(2, 6, generator=g, dtype=F64)
    with parts("linear_weights"):
        expected = oracle(lambda impl: impl.attention.linear_weights(scores))
        assert_close(attention.linear_weights(scores), expected, "linear_weights(scores)")
    x, weights = _randn(g, 4, 5), torch.softmax(_randn(g, 4), dim=0)
    with parts("swap_x2_x3"):
        expected = oracle(lambda impl: impl.attention.swap_x2_x3(x, weights))
        got = attention.swap_x2_x3(x, weights)
        assert isinstance(got, tuple) and len(got) == 3, "return a tuple (x4' before, the weights after, x4' after)"
        for index, what in enumerate(("x4' before the swap", "the weights after the swap", "x4' after the swap")):
            assert_close(got[index], expected[index], what)


@graded(points=3, covers=["copy_query"])
def test_copy_random(attention, parts, seed):
    """copy_query on unseen orthonormal keys and keys in general position"""
    for index in range(4):
        d = common.integers(seed + index, 2, 12, 1)[0]
        n = common.integers(seed + index + 50, 2, d + 1, 1)[0]
        if index % 2:
            keys, kind = common.general_keys(n, d, seed + index), "in general position"
            j = common.dominated_key(keys)
        else:
            keys, kind = common.orthonormal(n, d, seed + index), "orthonormal"
            j = common.integers(seed + index + 100, 0, n, 1)[0]
        with parts(f"{n} keys {kind} in {d} dimensions, j = {j}"):
            properties.check_copy(attention, keys, j, f"{n} keys {kind}, j = {j}")


@graded(points=2, covers=["average_query"])
def test_average_random(attention, parts, seed):
    """average_query on unseen orthonormal keys and values"""
    for index in range(3):
        d = common.integers(seed + index, 2, 16, 1)[0]
        n = common.integers(seed + index + 50, 2, d + 1, 1)[0]
        a, b = torch.randperm(n, generator=common.generator(seed + index))[:2].tolist()
        keys = common.orthonormal(n, d, seed + index)
        with parts(f"{n} keys in {d} dimensions, a = {a}, b = {b}"):
            properties.check_average(attention, keys, a, b, seed + index, f"{n} keys, a = {a}, b = {b}")


@graded(points=2, covers=["sample_keys"])
def test_sample_keys_random(attention, parts, seed):
    """sample_keys: means, covariances and independence for unseen Gaussians"""
    n, d = common.integers(seed, 2, 6, 2)
    mu = 3 * torch.randn(n, d, generator=common.generator(seed), dtype=F64)
    sigmas = torch.stack([common.spd(d, seed + 1 + i) for i in range(n)])
    keys = attention.sample_keys(mu, sigmas, attention.make_rng(seed), 20_000)
    assert_tensor(keys, "sample_keys(mu, sigmas, rng, 20000)", shape=(20_000, n, d), dtype=F64)
    properties.check_key_statistics(keys, mu, sigmas)


@graded(points=2, covers=["single_head_query"])
def test_single_head_random(attention, parts, seed):
    """single_head_query on unseen means, values and key pairs, case (i)"""
    for index in range(2):
        n, d, a, b = common.config(seed + 10 * index)
        with parts(f"n = {n}, d = {d}, a = {a}, b = {b}"):
            properties.check_single_head(attention, n, d, a, b, seed + 10 * index)


@graded(points=3, covers=["multihead_queries"])
def test_multihead_random(attention, parts, seed):
    """multihead_queries on unseen means, values and key pairs, cases (i) and (ii)"""
    for index in range(2):
        n, d, a, b = common.config(seed + 10 * index)
        properties.check_multi_head(attention, parts, n, d, a, b, seed + 10 * index)


@graded(points=1, covers=["experiment", "sample_keys", "attend_heads", "spread"])
def test_experiment_random(attention, oracle, parts, seed):
    """experiment with a single head in case (ii), on an unseen setup"""
    n, d, a, b = common.config(seed)
    mu, _ = properties.setup(n, d, a, b, seed)
    queries = (8.0 * (mu[a] + mu[b]))[None]
    properties.check_experiment(attention, queries, n, d, a, b, perturbed=True, num_samples=2000, seed=seed,
                                parts=parts)
    mu, values = properties.setup(n, d, a, b, seed)
    sigmas = common.covariances(mu, perturbed=a)
    with parts("the keys come from rng: one seed gives the same weights, another seed others",
               requires="1 head(s), case (ii): agrees with the grader's Monte Carlo"):
        runs = [attention.experiment(queries, mu, sigmas, values, a, b, 20, attention.make_rng(draw))[1]
                for draw in (seed, seed, seed + 1)]
        assert all(isinstance(run, torch.Tensor) and run.shape == runs[0].shape for run in runs), (
            "experiment returned weights of different shapes for the same arguments")
        assert torch.equal(runs[0], runs[1]), "two experiments with generators of the same seed gave other weights"
        assert not torch.equal(runs[0], runs[2]), (
            "experiments with generators of two seeds gave the same weights: draw the keys with the rng argument "
            "(sample_keys(mu, sigmas, rng, num_samples)), not with a generator of your own")
    # The Monte Carlo agreement above has the slack of sampling noise, within which a mean distance may pass for the
    # root-mean-square under one secret and not another; the spread of fixed outputs has none.
    outputs = torch.randn(2 * n, d, generator=common.generator(seed + 3), dtype=torch.float64)
    target = outputs[0] + 1.0
    with parts(f"spread of {2 * n} unseen outputs in {d} dimensions"):
        got = common.number(attention.spread(outputs, target), "spread(outputs, target)")
        assert_close(got, oracle(lambda impl: impl.attention.spread(outputs, target)), "spread(outputs, target)")


@graded(points=2, covers=["kqv_design"])
def test_kqv_random(attention, parts, seed):
    """kqv_design on unseen orthogonal u's (other widths and large norms)"""
    for index in range(2):
        d = common.integers(seed + index, 4, 12, 1)[0]
        norm = float(5 + 10 * torch.rand(1, generator=common.generator(seed + index)))
        with parts(f"d = {d}, |u| = {norm:.2f}"):
            properties.check_kqv(attention, properties.kqv_vectors(d, norm, seed + index),
                                 f"d = {d}, |u| = {norm:.2f}")


def _check_choice(attention, oracle, name: str, options: tuple, why: str) -> None:
    expected = oracle(lambda impl: getattr(impl.attention, name)).value
    got = common.choice(attention, name, options, f"`{name}`")
    assert got == expected, f"`{name}` = {got!r} is not right: {why}"


@graded(points=1, covers=["softmax_axis"])
def test_softmax_axis(attention, oracle):
    """Question 1.7 (softmax axis), multiple choice"""
    _check_choice(attention, oracle, "softmax_axis", (0, 1),
                  "row i of S holds query i's scores against every key, and each query's weights over the keys must "
                  "sum to 1, so the softmax runs along each row.")


@graded(points=1, covers=["causal_candidate"])
def test_causal_candidate(attention, oracle):
    """Question 1.9 (the causal mask), multiple choice"""
    _check_choice(attention, oracle, "causal_candidate", (0, 1, 2),
                  "query i may attend to keys j <= i, itself included: the kept scores form the lower triangle with "
                  "the diagonal.")


@graded(points=1, covers=["single_head_behaviour"])
def test_single_head_behaviour(attention, oracle):
    """Question 4.3 (what the single head does in case (ii)), multiple choice"""
    _check_choice(attention, oracle, "single_head_behaviour", ("a", "b", "c", "d"),
                  "look at the histogram of the weight on v_a in case (ii): it piles up near 0 and near 1, so c jumps "
                  "between v_b and v_a from sample to sample.")


@graded(points=1, covers=["c2_identity"])
def test_c2_identity(attention, oracle):
    """Question 6.1 (c2 with identity matrices), multiple choice"""
    _check_choice(attention, oracle, "c2_identity", ("a", "b", "c", "d"),
                  "with K = Q = I, x2 = u_a scores |u_a|^2 against itself and 0 against x1 and x3 (orthogonal), so "
                  "nearly all its weight is on itself and c2 is about u_a.")

# autograder-hidden-canary-7d3e9a (never ships to students)
