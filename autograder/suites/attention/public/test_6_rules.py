"""The assignment's rules on library routines."""

from autograder.grading import graded


@graded(points=0)
def test_only_allowed_routines(forbidden_findings):
    """Rules: no library attention (scaled_dot_product_attention, MultiheadAttention)"""
    found = [finding for items in forbidden_findings.values() for finding in items]
    assert not found, ("your notebook uses routines this assignment forbids; the tests covering them earn no points:\n"
                       + "\n".join(f"- {f}" for f in found))
