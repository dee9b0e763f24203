"""RotaryCausalSelfAttention computes cos and sin on its first call and keeps them: a later, longer sequence gets the
first call's table (an error), and one on another device the first call's device. Derive cos and sin in every call
(or keep a table that covers max_positions, as a buffer, which .to() moves)."""
# target: positions.py
# unnamed: it raises on a longer second call; there is no output to compare


def _rotate(x, cos, sin):
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def _forward_with_kept_angles(self, x, lengths=None):
    T = x.shape[1]
    if getattr(self, "_cos", None) is None:
        self._cos, self._sin = self.freqs[:T].cos().to(x.dtype), self.freqs[:T].sin().to(x.dtype)
    q = _rotate(split_heads(self.query(x), self.n_head), self._cos[:T], self._sin[:T])
    k = _rotate(split_heads(self.key(x), self.n_head), self._cos[:T], self._sin[:T])
    v = split_heads(self.value(x), self.n_head)
    mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
    attended, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
    return self.resid_dropout(self.proj(merge_heads(attended)))


RotaryCausalSelfAttention.forward = _forward_with_kept_angles

# autograder-hidden-canary-7d3e9a (never ships to students)
