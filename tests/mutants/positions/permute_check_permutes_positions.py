"""permute_check permutes the position embeddings together with the tokens (it permutes x + E instead of adding
E after permuting x), so it finds the layer equivariant even with positions."""
# target: positions.py


def permute_check(x, perm, weights, positions=None):
    added = x if positions is None else x + positions
    permute_first = attention_ffn(added[..., perm, :], weights)
    permute_after = attention_ffn(added, weights)[..., perm, :]
    return float((permute_first - permute_after).abs().max())

# autograder-hidden-canary-7d3e9a (never ships to students)
