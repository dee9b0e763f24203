"""The combined mask hides padded queries (rows) instead of padded keys (columns)."""
# target: masking.py


def combined_mask(lengths, T):
    queries = padding_mask(lengths, T)[:, None, :, None]
    return causal_mask(T, device=lengths.device)[None, None] & queries

# autograder-hidden-canary-7d3e9a (never ships to students)
