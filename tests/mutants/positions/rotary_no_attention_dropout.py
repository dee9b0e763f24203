"""RotaryCausalSelfAttention.forward calls scaled_dot_product_attention without dropout=self.attn_dropout: in
training the attention weights are never dropped, only the output."""
# target: positions.py
# unnamed: only training-mode dropout differs, and its random masks match no recorded value


def _rotary_without_attention_dropout(self, x, lengths=None):
    T = x.shape[1]
    q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
    k = apply_rope(split_heads(self.key(x), self.n_head), self.freqs)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _rotary_without_attention_dropout

# autograder-hidden-canary-7d3e9a (never ships to students)
