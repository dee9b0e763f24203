"""CausalSelfAttention divides the queries by sqrt(head width) and then calls scaled_dot_product_attention, which
divides the scores by it again: the scores end up divided by the head width. Scale once, in one place."""
# target: masking.py

_CorrectAttention = CausalSelfAttention


class CausalSelfAttention(_CorrectAttention):
    def forward(self, x, lengths=None):
        T, D = x.shape[1], x.shape[2]
        q = split_heads(self.query(x), self.n_head) / math.sqrt(D // self.n_head)
        k = split_heads(self.key(x), self.n_head)
        v = split_heads(self.value(x), self.n_head)
        mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(y)))

# autograder-hidden-canary-7d3e9a (never ships to students)
