"""masked_softmax calls scores.masked_fill(...) and drops its result: masked_fill returns a new tensor and leaves
scores as they were, so nothing is masked. Use the result (filled = scores.masked_fill(~mask, -inf))."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores.masked_fill(~mask, -math.inf)
    return torch.softmax(scores - scores.amax(dim=-1, keepdim=True), dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
