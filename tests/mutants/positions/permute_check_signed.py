"""permute_check returns the largest signed difference (max of Z(PX + E) - P Z(X + E)) instead of the largest
absolute difference: take .abs() before .max()."""
# target: positions.py


def permute_check(x, perm, weights, positions=None):
    added = 0 if positions is None else positions
    permute_first = attention_ffn(x[..., perm, :] + added, weights)
    permute_after = attention_ffn(x + added, weights)[..., perm, :]
    return float((permute_first - permute_after).max())

# autograder-hidden-canary-7d3e9a (never ships to students)
