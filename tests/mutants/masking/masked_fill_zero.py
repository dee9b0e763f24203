"""Masked scores are set to 0 instead of -inf before the softmax, so masked keys still get weight (e^0 = 1 is not
small): fill them with -inf."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
