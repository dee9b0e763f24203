"""masked_softmax calls the softmax without dim=: PyTorch's legacy implicit axis is 0 for a 3-D tensor and 1 for a
4-D one, so the weights are normalised over the batch or the heads instead of over the keys (only 2-D scores come
out right); always pass dim=-1."""
# target: masking.py
# seen in: public minGPT forks and CS231n transformer student repositories (F.softmax(att) with no dim, which warns
# and picks an axis by the tensor's rank)


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    axis = 0 if scores.dim() in (0, 1, 3) else 1
    filled = scores.masked_fill(~mask, -math.inf)
    top = filled.amax(dim=axis, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    exps = torch.exp(filled - top)
    total = exps.sum(dim=axis, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
