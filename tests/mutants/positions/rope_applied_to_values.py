"""RoPE is applied to the values as well as to the queries and keys (only queries and keys should be rotated:
the scores are what must depend on the relative position)."""
# target: positions.py


def _rope_everything(self, x, lengths=None):
    T = x.shape[1]
    q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
    k = apply_rope(split_heads(self.key(x), self.n_head), self.freqs)
    v = apply_rope(split_heads(self.value(x), self.n_head), self.freqs)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _rope_everything

# autograder-hidden-canary-7d3e9a (never ships to students)
