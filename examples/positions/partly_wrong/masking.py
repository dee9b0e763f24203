"""A plausible student submission with two bugs (for the demo and the harness's tests).

Bug 1: masked keys are filled with -1e9, so a row whose keys are all masked gets uniform weights.
Bug 2: padding_mask keeps one padded position too many (<= instead of <).
Everything else is correct, written the way many students write it.
"""

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
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        mask[i, : i + 1] = True
    return mask


def lecture_causal_candidate():
    for index, candidate in enumerate(LECTURE_MASKS):
        if torch.equal(candidate == 0, causal_mask(4)):
            return index
    return -1


def padding_mask(lengths, T):
    return torch.arange(T).expand(len(lengths), T) <= lengths.view(-1, 1)


def combined_mask(lengths, T):
    return (causal_mask(T).unsqueeze(0) & padding_mask(lengths, T).unsqueeze(1)).unsqueeze(1)


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    return torch.softmax(scores, dim=-1)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    d_k = k.size(-1)
    att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d_k)
    att = masked_softmax(att, mask)
    out = torch.matmul(dropout(att) if dropout is not None else att, v)
    return out, att


def split_heads(x, n_head):
    B, T, C = x.size()
    return x.view(B, T, n_head, C // n_head).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d = x.size()
    return x.permute(0, 2, 1, 3).contiguous().view(B, T, H * d)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        if d_model % n_head != 0:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x, lengths=None):
        T = x.size(1)
        q, k, v = (split_heads(layer(x), self.n_head) for layer in (self.query, self.key, self.value))
        mask = causal_mask(T) if lengths is None else combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(y)))
