"""The mask is applied after the softmax (weights zeroed afterwards), so rows no longer sum to one."""
# target: masking.py


def masked_softmax(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is None:
        return weights
    return weights.masked_fill(~mask, 0.0)

# autograder-hidden-canary-7d3e9a (never ships to students)
