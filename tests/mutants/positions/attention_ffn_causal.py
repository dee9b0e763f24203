"""attention_ffn uses a causal mask: masked attention depends on the order of the tokens, so the layer is not
permutation-equivariant even without position embeddings (this layer has no mask)."""
# target: positions.py


def attention_ffn(x, weights):
    q, k, v = x @ weights["query"], x @ weights["key"], x @ weights["value"]
    attended, _ = scaled_dot_product_attention(q, k, v, causal_mask(x.shape[-2]))
    return torch.relu(attended @ weights["ff_in"]) @ weights["ff_out"]

# autograder-hidden-canary-7d3e9a (never ships to students)
