"""dot_product_attention takes the softmax over the first axis (dim=0) instead of over the keys (the last axis)."""
# target: attention.ipynb


def dot_product_attention(q, keys, values):
    weights = torch.softmax(dot_scores(q, keys), dim=0)
    return (weights.unsqueeze(-2) @ values).squeeze(-2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
