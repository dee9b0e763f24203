"""Scores and outputs are computed by broadcasting to (..., T_q, T_k, d) and summing instead of matrix products:
the values are right, but the intermediates are d times larger than the weights."""
# slow
# target: masking.py
# unnamed: its values are right; only the runtime and memory tests catch it


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    scores = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    dropped = dropout(weights) if dropout is not None else weights
    return (dropped.unsqueeze(-1) * v.unsqueeze(-3)).sum(-2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
