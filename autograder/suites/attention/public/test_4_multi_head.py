"""Part 5: two heads that stay robust when the length of key a varies (the grader runs the Monte Carlo)."""

import torch

from autograder.grading import graded
from autograder.suites.attention import common, properties


@graded(points=4, covers=["multihead_queries"])
def test_multihead_queries(attention, parts):
    """multihead_queries: two different queries; c near (v_a + v_b) / 2 in case (i) and, with a low spread, in (ii)"""
    for n, d, a, b, seed in [(5, 8, 1, 3, 120), (4, 4, 3, 0, 121)]:
        properties.check_multi_head(attention, parts, n, d, a, b, seed)


@graded(points=1, covers=["multihead_queries", "experiment"])
def test_reported_multi_head(attention, oracle, parts):
    """The notebook's two-head spreads (i) and (ii) match the grader's Monte Carlo with your queries"""

    def queries(mu, a, b):
        got = attention.multihead_queries(mu, a, b)
        assert isinstance(got, tuple | list) and len(got) == 2, "multihead_queries: return a tuple (q1, q2)"
        return torch.stack([common.query(q, mu.shape[1], f"q{i + 1}") for i, q in enumerate(got)])

    properties.check_report(attention, oracle, parts, ("spread_multi_i", "spread_multi_ii"), queries, seed=130)
