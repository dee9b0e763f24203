"""RotaryCausalSelfAttention leaves out the residual dropout (self.resid_dropout on the output projection): only the
attention weights are dropped in training mode."""
# target: positions.py
# unnamed: only properties of training-mode outputs catch it (which entries dropout zeroed), not a value to match


def _no_residual_dropout(self, x, lengths=None):
    T = x.shape[1]
    q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
    k = apply_rope(split_heads(self.key(x), self.n_head), self.freqs)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.proj(merge_heads(attended))


RotaryCausalSelfAttention.forward = _no_residual_dropout

# autograder-hidden-canary-7d3e9a (never ships to students)
