"""Hidden tests found by mutation testing (``autograder validate --mutate attention``, docs/authoring.md): what the
other tests let through."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.attention import common, properties

F64 = common.F64


@graded(points=1, covers=["multiplicative_scores", "dot_scores"])
def test_multiplicative_scores_batched(student, oracle, seed):
    """multiplicative_scores with a batch of queries (..., d_q), as its docstring allows"""
    g = common.generator(seed)
    n, d, d_q, batch = common.integers(seed, 2, 9, 3) + [common.integers(seed + 1, 2, 5, 1)[0]]
    q, W, keys = (torch.randn(*shape, generator=g, dtype=F64) for shape in ((batch, d_q), (d_q, d), (batch, n, d)))
    got = student.attention.multiplicative_scores(q, W, keys)
    assert_tensor(got, "multiplicative_scores(q, W, keys)", shape=(batch, n), dtype=F64)
    assert_close(got, oracle(lambda impl: impl.attention.multiplicative_scores(q, W, keys)),
                 f"multiplicative_scores for {batch} queries of width {d_q} over {n} keys each")


@graded(points=1, covers=["copy_query"])
def test_copy_a_single_key(attention, parts, seed):
    """copy_query: one key alone (n = 1), the smallest set its docstring allows"""
    for d in (1, 3):
        with parts(f"one key in {d} dimensions"):
            properties.check_copy(attention, common.orthonormal(1, d, seed + d), 0, f"one key in {d} dimensions")

# autograder-hidden-canary-7d3e9a (never ships to students)
