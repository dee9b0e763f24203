"""A student's masking.py from the masking assignment, handed in again with positions (correct, written
differently from the reference: the harness must accept any correct implementation)."""

import math

import torch
from torch import nn

HIDE = -math.inf
LECTURE_MASKS = [
    torch.tensor([[HIDE, HIDE, HIDE, HIDE], [0, HIDE, HIDE, HIDE], [0, 0, HIDE, HIDE], [0, 0, 0, HIDE]]),
    torch.tensor([[0, 0, 0, 0], [HIDE, 0, 0, 0], [HIDE, HIDE, 0, 0], [HIDE, HIDE, HIDE, 0]]),
    torch.tensor([[0, HIDE, HIDE, HIDE], [0, 0, HIDE, HIDE], [0, 0, 0, HIDE], [0, 0, 0, 0]]),
]


def causal_mask(T, device=None):
    rows = torch.arange(T, device=device)
    return rows[:, None] >= rows[None, :]


def lecture_causal_candidate():
    matches = [i for i, candidate in enumerate(LECTURE_MASKS) if torch.equal(candidate == 0, causal_mask(4))]
    return matches[0]


def padding_mask(lengths, T):
    return torch.arange(T, device=lengths.device).expand(len(lengths), T) < lengths[:, None]


def combined_mask(lengths, T):
    return (causal_mask(T, lengths.device) & padding_mask(lengths, T)[:, None, :]).unsqueeze(1)


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    top = scores.max(dim=-1, keepdim=True).values
    top = torch.nan_to_num(top, neginf=0.0)
    weights = (scores - top).exp()
    total = weights.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, weights / total.clamp_min(torch.finfo(scores.dtype).tiny), 0.0)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(torch.matmul(q, k.transpose(-1, -2)) / q.size(-1) ** 0.5, mask)
    used = weights if dropout is None else dropout(weights)
    return torch.matmul(used, v), weights


def split_heads(x, n_head):
    B, T, D = x.shape
    return x.reshape(B, T, n_head, -1).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * d)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        assert d_model % n_head == 0, "d_model must be divisible by n_head"
        self.n_head = n_head
        self.query, self.key, self.value, self.proj = (nn.Linear(d_model, d_model) for _ in range(4))
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x, lengths=None):
        T = x.size(1)
        heads = [split_heads(layer(x), self.n_head) for layer in (self.query, self.key, self.value)]
        mask = causal_mask(T, x.device) if lengths is None else combined_mask(lengths, T)
        out, _ = scaled_dot_product_attention(*heads, mask=mask, dropout=self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(out)))
