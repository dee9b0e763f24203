"""masked_softmax fills the caller's scores in place (masked_fill_): the weights are right, but the scores the
caller passed now hold -inf at every masked key. Use masked_fill, which returns a new tensor."""
# target: masking.py
# unnamed: its output is right; only the caller's tensor after the call tells it


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores.masked_fill_(~mask, -math.inf)
    row_max = scores.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
