"""combined_mask joins the causal and padding masks with OR (|) instead of AND (&): a key must be both in the past
and a real token."""
# target: masking.py


def combined_mask(lengths, T):
    keys = padding_mask(lengths, T)[:, None, None, :]
    return causal_mask(T, device=lengths.device)[None, None] | keys

# autograder-hidden-canary-7d3e9a (never ships to students)
