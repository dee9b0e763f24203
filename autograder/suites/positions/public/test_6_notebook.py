"""positions.ipynb: rope_offset_scores, the function behind the RoPE plot."""

import contextlib

import torch

from autograder.grading import StudentCodeFailure, assert_close, assert_tensor, graded, recognise
from autograder.suites.positions import common


@graded(points=1, covers=["rope_offset_scores"])
def test_rope_offset_scores_matches_reference(notebook, positions, oracle, parts):
    """positions.ipynb, rope_offset_scores: one score per query position, like the reference"""
    for index, (head_dim, P, n, dtype) in enumerate([(8, 12, 0, torch.float64), (6, 20, 7, torch.float32)]):
        q, k = common.vectors((2, head_dim), seed=600 + index, dtype=dtype)
        table = common.angle_table(head_dim, P, seed=600 + index)
        with parts(f"head_dim={head_dim}, {P} positions, key at n={n}, {dtype}"):
            with contextlib.suppress(StudentCodeFailure):  # not graded: is a mistake in apply_rope or in here?
                recognise(positions.apply_rope(k.expand(P, -1), table),
                          oracle(lambda impl, k=k, table=table, P=P: impl.positions.apply_rope(k.expand(P, -1), table)))
            got = notebook.rope_offset_scores(q, k, table, n)
            assert_tensor(got, "the scores", shape=(P,), dtype=dtype)
            expected = oracle(lambda impl, q=q, k=k, table=table, n=n:
                              impl.positions_notebook.rope_offset_scores(q, k, table, n))
            assert_close(got, expected, "the scores")


@graded(points=1, covers=["rope_offset_scores"])
def test_rope_offset_scores_depend_on_offset(notebook):
    """positions.ipynb, rope_offset_scores: moving the key moves the curve (the score depends on m - n)"""
    q, k = common.vectors((2, 8), seed=610, dtype=torch.float64)
    table = common.angle_table(8, 30, seed=610)
    at_zero, at_nine = notebook.rope_offset_scores(q, k, table, 0), notebook.rope_offset_scores(q, k, table, 9)
    assert_tensor(at_zero, "the scores", shape=(30,), dtype=torch.float64)
    assert_close(at_nine[9:], at_zero[:21], "the scores with the key at n=9, from m=9 on, compared with the scores "
                 "with the key at n=0 (both are the same offsets m - n = 0, 1, ...)")
