"""scaled_dot_product_attention scales the queries in place (q /= sqrt(d_k)): its output is right, but the caller's
queries are divided by sqrt(d_k) after the call, and a second call with them gets scores too small. Scale the scores
(or a new tensor), never an argument."""
# target: masking.py
# unnamed: its output is right; only the caller's tensor after the call tells it


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    q /= math.sqrt(q.shape[-1])
    weights = masked_softmax(q @ k.transpose(-2, -1), mask)
    dropped = dropout(weights) if dropout is not None else weights
    return dropped @ v, weights

# autograder-hidden-canary-7d3e9a (never ships to students)
