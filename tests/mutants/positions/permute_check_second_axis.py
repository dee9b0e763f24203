"""permute_check permutes axis 1 (x[:, perm]) instead of the token axis (x[..., perm, :]): right for a (B, T, D) batch,
but an unbatched (T, D) input gets its features permuted. Index the second-to-last axis."""
# target: positions.py
# unnamed: on a (T, D) input it raises or compares other values; only the shape of the input tells it


def permute_check(x, perm, weights, positions=None):
    added = 0 if positions is None else positions
    permute_first = attention_ffn(x[:, perm] + added, weights)
    permute_after = attention_ffn(x + added, weights)[:, perm]
    return float((permute_first - permute_after).abs().max())

# autograder-hidden-canary-7d3e9a (never ships to students)
