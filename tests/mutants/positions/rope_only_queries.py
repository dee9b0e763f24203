"""RoPE rotates the queries but not the keys, so the scores depend on the query's absolute position instead of
the offset between query and key."""
# target: positions.py


def _rope_queries(self, x, lengths=None):
    T = x.shape[1]
    q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
    k = split_heads(self.key(x), self.n_head)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _rope_queries

# autograder-hidden-canary-7d3e9a (never ships to students)
