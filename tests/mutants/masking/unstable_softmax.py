"""The softmax exponentiates the raw scores without subtracting the row maximum,
so large scores overflow to inf and NaN."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    exps = torch.exp(scores) * mask
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
