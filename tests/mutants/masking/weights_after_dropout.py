"""scaled_dot_product_attention returns the weights after dropout instead of before it (the documented ones)."""
# target: masking.py


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights

# autograder-hidden-canary-7d3e9a (never ships to students)
