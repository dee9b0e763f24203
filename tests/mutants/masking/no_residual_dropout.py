"""CausalSelfAttention.forward never applies self.resid_dropout: in training only the attention weights are
dropped, and the output of proj is never dropped."""
# target: masking.py
# unnamed: only training-mode dropout differs, and its random masks match no recorded value


def _without_residual_dropout(self, x, lengths=None):
    T = x.shape[1]
    q = split_heads(self.query(x), self.n_head)
    k = split_heads(self.key(x), self.n_head)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.proj(merge_heads(y))


CausalSelfAttention.forward = _without_residual_dropout

# autograder-hidden-canary-7d3e9a (never ships to students)
