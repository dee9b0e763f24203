"""scaled_dot_product_attention applies dropout to its output (dropout(weights @ v)) instead of to the weights
before they multiply v."""
# target: masking.py


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    output = weights @ v
    return (dropout(output) if dropout is not None else output), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
