"""The scores are multiplied by sqrt(d_k) instead of divided by it."""
# target: masking.py


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) * math.sqrt(q.shape[-1]), mask)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights

# autograder-hidden-canary-7d3e9a (never ships to students)
