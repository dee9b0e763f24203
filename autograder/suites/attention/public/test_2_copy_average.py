"""Parts 2 and 3: copying one key, and averaging two; graded on what the student's query does."""

from autograder.grading import graded
from autograder.suites.attention import common, properties


@graded(points=2, covers=["copy_query"])
def test_copy_orthonormal_keys(attention, parts):
    """copy_query: weight at least 0.99 on key j, orthonormal keys"""
    for n, d, j, seed in [(2, 2, 0, 1), (4, 6, 3, 2), (8, 8, 5, 3)]:
        keys = common.orthonormal(n, d, seed)
        with parts(f"{n} orthonormal keys in {d} dimensions, j = {j}"):
            properties.check_copy(attention, keys, j, f"{n} orthonormal keys, j = {j}")


@graded(points=2, covers=["copy_query"])
def test_copy_general_position(attention, parts):
    """copy_query: weight at least 0.99 on key j, keys in general position (different lengths, shared direction)"""
    for n, d, seed in [(3, 3, 11), (5, 8, 12), (6, 6, 13)]:
        keys = common.general_keys(n, d, seed)
        j = common.dominated_key(keys)
        with parts(f"{n} keys in general position in {d} dimensions, j = {j}"):
            properties.check_copy(attention, keys, j, f"{n} keys in general position, j = {j}")


@graded(points=3, covers=["average_query"])
def test_average_query(attention, parts):
    """average_query: c stays within 2% of (v_a + v_b) / 2 over random values, orthonormal keys"""
    for n, d, a, b, seed in [(2, 3, 0, 1, 21), (5, 5, 1, 3, 22), (10, 12, 9, 2, 23)]:
        keys = common.orthonormal(n, d, seed)
        with parts(f"{n} orthonormal keys in {d} dimensions, a = {a}, b = {b}"):
            properties.check_average(attention, keys, a, b, seed, f"{n} keys, a = {a}, b = {b}")
