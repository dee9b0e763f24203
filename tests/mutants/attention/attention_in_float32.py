"""dot_product_attention computes in float32 (.float()) and returns float32 results: keep the inputs' dtype
(float64 here)."""
# target: attention.ipynb


def dot_product_attention(q, keys, values):
    weights = torch.softmax(dot_scores(q, keys).float(), dim=-1)
    return (weights.unsqueeze(-2) @ values.float()).squeeze(-2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
