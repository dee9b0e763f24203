"""The attention scores are not divided by sqrt(d_k) before the softmax."""
# target: masking.py


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1), mask)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights

# autograder-hidden-canary-7d3e9a (never ships to students)
