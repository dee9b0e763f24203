"""The softmax subtracts the maximum of the whole tensor (scores.max() without dim) instead of each row's maximum,
so rows with smaller scores underflow to all zeros: use amax(dim=-1, keepdim=True)."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    filled = scores.masked_fill(~mask, -math.inf)
    exps = torch.exp(filled - scores.max())
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
