"""Hidden tests: the same questions on inputs drawn from the secret seed, and the multiple-choice answers.

These never ship to students. Their inputs come from the ``seed`` fixture, which mixes in the term's
secret, so neither the numbers nor the designs can be tuned to the public cases.
"""

import torch

from autograder.grading import StudentError, assert_close, assert_tensor, graded
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


GIVEN_TABLES = {"X_AABA", "EMBED_A", "EMBED_B"}  # aaba's docstring names X_AABA: reading it is the question


def _changed(value):
    """Another value of the same kind: a number or a tensor of the same shape and dtype (None for anything else)."""
    if isinstance(value, bool) or not isinstance(value, int | float | torch.Tensor):
        return None
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bool:
            return ~value
        return 1.5 * value + 0.25 if value.is_floating_point() else value + 1
    return value + 3 if isinstance(value, int) else 1.5 * value + 0.25


def _answer_calls(attention) -> dict:
    """Each answer that takes arguments, called on fixed inputs of the notebook's sizes (generators made anew)."""
    g = common.generator(300)
    mu, values = properties.setup(5, 8, 1, 3, 301)
    sigmas = common.covariances(mu, perturbed=1)
    x, W, keys, sampled = _randn(g, 4, 3), _randn(g, 3, 3), _randn(g, 2, 4, 3), _randn(g, 3, 5, 8)
    queries, general = torch.stack([4.0 * mu[1], 4.0 * mu[3]]), common.general_keys(4, 6, 302)
    u = properties.kqv_vectors(6, 8.0, 305)
    return {
        "dot_scores": lambda: attention.dot_scores(x[0], keys),
        "multiplicative_scores": lambda: attention.multiplicative_scores(x[:2], W, keys),
        "scaled_dot_scores": lambda: attention.scaled_dot_scores(x[1], keys),
        "dot_product_attention": lambda: attention.dot_product_attention(x[2], keys, x),
        "aaba": lambda: attention.aaba(torch.tensor([0.5, 2.0], dtype=F64)),
        "smallest_scale": lambda: attention.smallest_scale(0.8),
        "linear_weights": lambda: attention.linear_weights(0.1 + x.abs()),
        "self_attention": lambda: attention.self_attention(x, W, W.T, W @ W),
        "swap_x2_x3": lambda: attention.swap_x2_x3(x, torch.softmax(x[:, 0], dim=0)),
        "copy_query": lambda: attention.copy_query(general, 2),
        "average_query": lambda: attention.average_query(mu, 0, 4),
        "sample_keys": lambda: attention.sample_keys(mu, sigmas, attention.make_rng(303), 7),
        "single_head_query": lambda: attention.single_head_query(mu, 2, 4),
        "attend_heads": lambda: attention.attend_heads(queries, sampled, values),
        "spread": lambda: attention.spread(values, values[0]),
        "experiment": lambda: attention.experiment(queries, mu, sigmas, values, 1, 3, 40, attention.make_rng(304)),
        "multihead_queries": lambda: attention.multihead_queries(mu, 0, 2),
        "kqv_design": lambda: attention.kqv_design(u),
    }


def _outputs(calls: dict) -> dict:
    """Each call's output, or the error it raised."""
    out = {}
    for name, call in calls.items():
        try:
            out[name] = call()
        except StudentError as exc:
            out[name] = exc
    return out


ANSWERS = ["dot_scores", "multiplicative_scores", "scaled_dot_scores", "dot_product_attention", "aaba",
           "smallest_scale", "linear_weights", "self_attention", "swap_x2_x3", "copy_query", "average_query",
           "sample_keys", "single_head_query", "attend_heads", "spread", "experiment", "multihead_queries",
           "kqv_design"]


@graded(points=2, covers=ANSWERS)
def test_answers_read_their_arguments(attention, oracle, parts):
    """Every answer gives the same output after the notebook's setup constants change: it reads its arguments"""
    names = oracle(lambda impl: sorted(name for name, value in vars(impl.attention).items()
                                       if not name.startswith("_") and name not in GIVEN_TABLES
                                       and _changed(value) is not None)).value
    own = {}
    for name in names:
        try:
            own[name] = getattr(attention, name).get()
        except StudentError:  # not defined in this notebook: nothing to change
            continue
    changed = {name: _changed(value) for name, value in own.items() if _changed(value) is not None}
    calls = _answer_calls(attention)
    before = _outputs(calls)
    attention.assign(changed)
    try:
        after = _outputs(calls)
    finally:
        attention.assign({name: own[name] for name in changed})
    shown = ", ".join(sorted(changed)[:8]) + (", ..." if len(changed) > 8 else "")
    for name in calls:
        with parts(name):
            assert not isinstance(before[name], StudentError), f"{name} raised an error: {before[name]}"
            assert not isinstance(after[name], StudentError), (
                f"{name} raised an error once the grader changed the notebook's globals ({shown}): "
                f"{after[name]}. Read only the function's arguments, not the notebook's setup constants")
            assert_close(after[name], before[name], f"{name}'s output on the same arguments after the grader changed "
                         f"the notebook's globals ({shown}): read only the function's arguments, never the notebook's "
                         "setup constants (N_KEYS, MU, ...), which are the experiment's, not the caller's")

# autograder-hidden-canary-7d3e9a (never ships to students)
