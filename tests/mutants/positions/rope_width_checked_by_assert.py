"""apply_rope checks that x's width is twice the table's with assert, which raises AssertionError, instead of the
documented ValueError."""
# target: positions.py
# unnamed: only the exception it raises is checked, not a value to match

_correct_apply_rope = apply_rope


def apply_rope(x, freqs, positions=None):
    assert 2 * freqs.shape[-1] == x.shape[-1], "x and freqs disagree"
    return _correct_apply_rope(x, freqs, positions)

# autograder-hidden-canary-7d3e9a (never ships to students)
