"""RotaryCausalSelfAttention caches cos and sin of its whole table in the dtype of its first call: after .double(),
float64 queries are rotated with float32 cos and sin (about 1e-7 off, far more than float64 allows). Cast cos and sin
to the dtype of each call's queries."""
# target: positions.py
# unnamed: after .double() its output is off by float32 rounding, which no known mistake shares


def _rotate_kept(x, cos, sin):
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def _forward_in_first_dtype(self, x, lengths=None):
    T = x.shape[1]
    if getattr(self, "_cos", None) is None:
        self._cos, self._sin = self.freqs.cos().to(x.dtype), self.freqs.sin().to(x.dtype)
    q = _rotate_kept(split_heads(self.query(x), self.n_head), self._cos[:T], self._sin[:T])
    k = _rotate_kept(split_heads(self.key(x), self.n_head), self._cos[:T], self._sin[:T])
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _forward_in_first_dtype

# autograder-hidden-canary-7d3e9a (never ships to students)
