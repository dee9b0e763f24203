"""scaled_dot_product_attention divides the scores by the square root of the number of keys (k.size(-2), the
sequence length) instead of the key width d_k (k.size(-1)): the scaling changes with the length of the input."""
# target: masking.py
# seen in: public minGPT/nanoGPT forks (1.0 / math.sqrt(k.size(-2)) for 1.0 / math.sqrt(k.size(-1)))


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])
    weights = masked_softmax(scores, mask)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights

# autograder-hidden-canary-7d3e9a (never ships to students)
