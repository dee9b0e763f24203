"""permute_check compares Z(PX) with Z(X) instead of with P Z(X): the outputs must be permuted too."""
# target: positions.py


def permute_check(x, perm, weights, positions=None):
    added = 0 if positions is None else positions
    return float((attention_ffn(x[..., perm, :] + added, weights) - attention_ffn(x + added, weights)).abs().max())

# autograder-hidden-canary-7d3e9a (never ships to students)
