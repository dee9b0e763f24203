"""The boolean mask is added to the scores (scores + mask) instead of filling the masked scores with -inf, so masked
keys keep weight: use scores.masked_fill(~mask, -inf)."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores + mask, dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
