"""CausalSelfAttention leaves out the residual dropout (self.resid_dropout on the output projection): only the
attention weights are dropped in training mode."""
# target: masking.py
# unnamed: only properties of training-mode outputs catch it (which entries dropout zeroed), not a value to match

_CorrectAttention = CausalSelfAttention


class CausalSelfAttention(_CorrectAttention):
    def forward(self, x, lengths=None):
        T = x.shape[1]
        q = split_heads(self.query(x), self.n_head)
        k = split_heads(self.key(x), self.n_head)
        v = split_heads(self.value(x), self.n_head)
        mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
        return self.proj(merge_heads(y))

# autograder-hidden-canary-7d3e9a (never ships to students)
