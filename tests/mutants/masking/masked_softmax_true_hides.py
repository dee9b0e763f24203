"""masked_softmax hides the keys where the mask is True (the "True = masked" convention of some PyTorch APIs)
instead of those where it is False: here True means "may attend", so fill the scores where ~mask."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.zeros_like(scores, dtype=torch.bool)
    filled = scores.masked_fill(mask, -math.inf)
    row_max = filled.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(filled - row_max)
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
