"""Masked scores are filled with -1e9 instead of being excluded,
so a fully masked row gets uniform weights instead of zeros."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
