"""sinusoidal and shift_operator: the table of "Attention is all you need" and its relative-position property."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.positions import common


@graded(points=3, covers=["sinusoidal"])
def test_sinusoidal_matches_reference(positions, oracle, parts):
    """sinusoidal: Phi[t, 2i] = sin(t / 10000^(2i/d)), Phi[t, 2i+1] = cos(...), t from 0 (float32 and float64)"""
    for T, d, dtype in [(6, 8, torch.float32), (50, 16, torch.float32), (12, 6, torch.float64), (1, 2, torch.float64)]:
        with parts(f"sinusoidal({T}, {d}, dtype={dtype})"):
            got = positions.sinusoidal(T, d, dtype=dtype)
            assert_tensor(got, f"sinusoidal({T}, {d})", shape=(T, d), dtype=dtype)
            expected = oracle(lambda impl, T=T, d=d, dtype=dtype: impl.positions.sinusoidal(T, d, dtype=dtype))
            assert_close(got, expected, f"sinusoidal({T}, {d})")


@graded(points=1, covers=["sinusoidal", "shift_operator"])
def test_odd_width_is_an_error(positions, parts):
    """sinusoidal and shift_operator: an odd width raises a ValueError"""
    for label, call in [("sinusoidal(4, 5)", lambda: positions.sinusoidal(4, 5)),
                        ("shift_operator(1, 7)", lambda: positions.shift_operator(1, 7))]:
        with parts(label):
            common.assert_raises_value_error(call, label, "sin and cos come in pairs, so the width must be even")


@graded(points=2, covers=["shift_operator"])
def test_shift_operator_matches_reference(positions, oracle, parts):
    """shift_operator: the block-diagonal M_k matches the reference (k positive, negative and 0)"""
    for k, d, dtype in [(1, 4, torch.float64), (3, 8, torch.float32), (-2, 6, torch.float64), (0, 4, torch.float32)]:
        with parts(f"shift_operator({k}, {d}, dtype={dtype})"):
            got = positions.shift_operator(k, d, dtype=dtype)
            assert_tensor(got, f"shift_operator({k}, {d})", shape=(d, d), dtype=dtype)
            expected = oracle(lambda impl, k=k, d=d, dtype=dtype: impl.positions.shift_operator(k, d, dtype=dtype))
            assert_close(got, expected, f"shift_operator({k}, {d})")


@graded(points=2, covers=["sinusoidal", "shift_operator"])
def test_shift_property(positions, parts):
    """sinusoidal and shift_operator together: Phi[t + k] = Phi[t] M_k for every t"""
    for k, d in [(1, 8), (5, 12), (-3, 6)]:
        with parts(f"k={k}, d={d}"):
            common.assert_shift_property(positions, 10, k, d)
