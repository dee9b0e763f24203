"""attend_heads adds the heads' outputs instead of averaging them."""
# target: attention.ipynb


def attend_heads(queries, keys, values):
    outputs, weights = dot_product_attention(queries, keys.unsqueeze(-3), values)
    return outputs.sum(dim=-2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
