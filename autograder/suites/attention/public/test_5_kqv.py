"""Part 6: key, query and value matrices designed so that c2 ~ u_b and c1 ~ u_b - u_c."""

from autograder.grading import graded
from autograder.suites.attention import properties


@graded(points=4, covers=["kqv_design"])
def test_kqv_design(attention, oracle, parts):
    """kqv_design: c2 within 5% of u_b and c1 within 5% of u_b - u_c, for the notebook's u's and others"""
    notebook_u = oracle(lambda impl: impl.attention.U).value
    cases = {"the notebook's u's": notebook_u, "d = 4, |u| = 10": properties.kqv_vectors(4, 10.0, 140),
             "d = 9, |u| = 6": properties.kqv_vectors(9, 6.0, 141)}
    for label, u in cases.items():
        with parts(label):
            properties.check_kqv(attention, u, label)
