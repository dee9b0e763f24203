"""CausalSelfAttention.forward never applies self.attn_dropout (scaled_dot_product_attention gets no dropout): in
training only the output is dropped, and the attention weights never are."""
# target: masking.py
# unnamed: only training-mode dropout differs, and its random masks match no recorded value


def _without_attention_dropout(self, x, lengths=None):
    T = x.shape[1]
    q = split_heads(self.query(x), self.n_head)
    k = split_heads(self.key(x), self.n_head)
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    y, _ = scaled_dot_product_attention(q, k, v, mask)
    return self.resid_dropout(self.proj(merge_heads(y)))


CausalSelfAttention.forward = _without_attention_dropout

# autograder-hidden-canary-7d3e9a (never ships to students)
