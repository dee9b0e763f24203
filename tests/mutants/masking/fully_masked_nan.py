"""A row whose keys are all masked gives NaN (softmax of a row of -inf): check for rows with no kept key and return
zeros there."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
