"""RoPE is applied to the full d_model-wide projections before they are split into heads, with frequencies for
d_model instead of the head width, so every head after the first gets the wrong (slow) frequencies."""
# target: positions.py


def _rope_before_split(self, x, lengths=None):
    T, d_model = x.shape[1], x.shape[2]
    freqs = rope_frequencies(d_model, T, dtype=torch.float64)
    q = split_heads(apply_rope(self.query(x), freqs), self.n_head)
    k = split_heads(apply_rope(self.key(x), freqs), self.n_head)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _rope_before_split

# autograder-hidden-canary-7d3e9a (never ships to students)
