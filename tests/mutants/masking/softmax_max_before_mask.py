"""masked_softmax subtracts each row's maximum over every key, masked ones included: where a masked key holds the
largest score, the kept keys' exponentials underflow to 0 at large scores and the row comes out all zeros; take the
maximum after the masked scores are set to -inf."""
# target: masking.py


def masked_softmax(scores, mask=None):
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    shifted = scores - scores.amax(dim=-1, keepdim=True)
    exps = torch.exp(shifted.masked_fill(~mask, -math.inf))
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))

# autograder-hidden-canary-7d3e9a (never ships to students)
