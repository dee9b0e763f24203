"""The softmax normalises over the queries (dim=-2) instead of over the keys (the last axis)."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    filled = scores.masked_fill(~mask, -math.inf)
    weights = torch.softmax(filled, dim=-2)
    return torch.nan_to_num(weights, nan=0.0)

# autograder-hidden-canary-7d3e9a (never ships to students)
