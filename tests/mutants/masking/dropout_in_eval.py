"""Dropout stays active in eval mode (torch.nn.functional.dropout called with training=True)."""
# target: masking.py

_CorrectAttention = CausalSelfAttention


class CausalSelfAttention(_CorrectAttention):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__(d_model, n_head, dropout)
        self.p = dropout

    def forward(self, x, lengths=None):
        T = x.shape[1]
        q = split_heads(self.query(x), self.n_head)
        k = split_heads(self.key(x), self.n_head)
        v = split_heads(self.value(x), self.n_head)
        mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
        always = lambda w: torch.nn.functional.dropout(w, self.p, training=True)  # noqa: E731
        y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=always)
        return torch.nn.functional.dropout(self.proj(merge_heads(y)), self.p, training=True)

# autograder-hidden-canary-7d3e9a (never ships to students)
