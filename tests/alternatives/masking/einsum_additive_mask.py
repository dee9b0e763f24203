"""einsum throughout, an additive float mask (0 or -inf) instead of masked_fill, and torch.where for the padding.

Style: the "einsum is all you need" school (Rocktaschel's blog post, many CS224N write-ups): every contraction is
named by its indices, the heads are split with a reshape and permute, and the mask is turned into a float bias that
is added to the scores, as the lecture's LECTURE_MASKS are written. The masks themselves are still the boolean "may
attend" tensors the module docstring asks for (True = may attend): only masked_softmax turns them into a bias.
Written from scratch for this catalogue.
"""
# target: masking.py


def causal_mask(T, device=None):
    rows = torch.arange(T, device=device)
    return rows[:, None] >= rows[None, :]


def lecture_causal_candidate():
    wanted = causal_mask(4)
    for index, candidate in enumerate(LECTURE_MASKS):
        if bool((torch.isfinite(candidate) == wanted).all()):
            return index
    raise ValueError("no candidate is causal")


def padding_mask(lengths, T):
    return torch.arange(T, device=lengths.device).expand(lengths.shape[0], T) < lengths[:, None]


def combined_mask(lengths, T):
    B = lengths.shape[0]
    return torch.logical_and(causal_mask(T, lengths.device).view(1, 1, T, T), padding_mask(lengths, T).view(B, 1, 1, T))


def masked_softmax(scores, mask=None):
    if mask is not None:  # the boolean mask becomes an additive bias in the scores' own dtype
        keep = torch.zeros((), dtype=scores.dtype, device=scores.device)
        hide = torch.full((), float("-inf"), dtype=scores.dtype, device=scores.device)
        scores = scores + torch.where(mask, keep, hide)
    peak = scores.max(dim=-1, keepdim=True).values
    peak = torch.where(peak == float("-inf"), torch.zeros_like(peak), peak)
    exps = (scores - peak).exp()
    total = exps.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, exps / total.clamp_min(torch.finfo(scores.dtype).tiny), torch.zeros_like(exps))


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * (q.shape[-1] ** -0.5)
    weights = masked_softmax(scores, mask)
    mixed = weights if dropout is None else dropout(weights)
    return torch.einsum("...qk,...kd->...qd", mixed, v), weights


def split_heads(x, n_head):
    B, T, D = x.shape
    return x.reshape(B, T, n_head, D // n_head).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * d)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"n_head ({n_head}) must divide d_model ({d_model})")
        self.n_head = n_head
        self.query, self.key, self.value, self.proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.attn_dropout, self.resid_dropout = nn.Dropout(dropout), nn.Dropout(dropout)

    def forward(self, x, lengths=None):
        T = x.shape[1]
        heads = [split_heads(projection(x), self.n_head) for projection in (self.query, self.key, self.value)]
        mask = causal_mask(T, x.device) if lengths is None else combined_mask(lengths, T)
        out, _ = scaled_dot_product_attention(*heads, mask=mask, dropout=self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(out)))


# autograder-hidden-canary-7d3e9a (never ships to students)
