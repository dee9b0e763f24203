"""CausalSelfAttention builds its causal mask on the first call and keeps it: a later, longer sequence (or one on
another device) gets the first call's mask. Build the mask in every call, for that call's length and device."""
# target: masking.py
# unnamed: it raises on a longer second call; there is no output to compare


def _forward_with_kept_mask(self, x, lengths=None):
    T = x.shape[1]
    if getattr(self, "_mask", None) is None:
        self._mask = causal_mask(T, device=x.device)
    q = split_heads(self.query(x), self.n_head)
    k = split_heads(self.key(x), self.n_head)
    v = split_heads(self.value(x), self.n_head)
    mask = self._mask[:T, :T]
    if lengths is not None:
        mask = mask[None, None] & padding_mask(lengths, T)[:, None, None, :]
    y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(y)))


CausalSelfAttention.forward = _forward_with_kept_mask

# autograder-hidden-canary-7d3e9a (never ships to students)
