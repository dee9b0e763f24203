"""attention_ffn uses GELU in the feed-forward network instead of ReLU: Z = ReLU(A W_ff_in) W_ff_out."""
# target: positions.py


def attention_ffn(x, weights):
    q, k, v = x @ weights["query"], x @ weights["key"], x @ weights["value"]
    attended, _ = scaled_dot_product_attention(q, k, v)
    return torch.nn.functional.gelu(attended @ weights["ff_in"]) @ weights["ff_out"]

# autograder-hidden-canary-7d3e9a (never ships to students)
