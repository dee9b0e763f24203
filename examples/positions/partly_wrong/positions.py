"""A plausible student submission with mistakes (for the demo and the harness's tests).

Bug 1: sinusoidal puts cos in the even columns and sin in the odd ones (swapped).
Bug 2: apply_rope rotates the two halves (i, i + head_dim/2) instead of adjacent pairs (2i, 2i+1).
Bug 3: LearnedPositions clamps positions past block_size to the last row instead of raising an error.
Also, masking.py is this student's masking submission with its two bugs (padding off by one, -1e9 fill).
Everything else is correct, written the way many students write it.
"""

import math

import torch
from masking import CausalSelfAttention, causal_mask, combined_mask, merge_heads, scaled_dot_product_attention
from masking import split_heads
from torch import nn


def attention_ffn(x, weights):
    q = torch.matmul(x, weights["query"])
    k = torch.matmul(x, weights["key"])
    v = torch.matmul(x, weights["value"])
    a, _ = scaled_dot_product_attention(q, k, v)
    h = torch.relu(torch.matmul(a, weights["ff_in"]))
    return torch.matmul(h, weights["ff_out"])


def permute_check(x, perm, weights, positions=None):
    if positions is None:
        positions = torch.zeros(x.shape[-2], x.shape[-1], dtype=x.dtype)
    left = attention_ffn(x[..., perm, :] + positions, weights)
    right = attention_ffn(x + positions, weights)[..., perm, :]
    return float(torch.max(torch.abs(left - right)))


class LearnedPositions(nn.Module):
    def __init__(self, block_size, d_model):
        super().__init__()
        self.block_size = block_size
        self.weight = nn.Parameter(torch.zeros(block_size, d_model))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        idx = torch.arange(x.shape[1]).clamp(max=self.block_size - 1)
        return x + self.weight[idx]


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2 != 0:
        raise ValueError("odd d")
    out = torch.zeros(T, d, dtype=torch.float64)
    for i in range(d // 2):
        w = 1.0 / (10000 ** (2 * i / d))
        t = torch.arange(T, dtype=torch.float64)
        out[:, 2 * i] = torch.cos(t * w)
        out[:, 2 * i + 1] = torch.sin(t * w)
    return out.to(dtype)


def shift_operator(k, d, dtype=torch.float32):
    if d % 2 != 0:
        raise ValueError("odd d")
    M = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        a = k / (10000 ** (2 * i / d))
        M[2 * i, 2 * i], M[2 * i, 2 * i + 1] = math.cos(a), -math.sin(a)
        M[2 * i + 1, 2 * i], M[2 * i + 1, 2 * i + 1] = math.sin(a), math.cos(a)
    return M.to(dtype)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2 != 0:
        raise ValueError("odd head_dim")
    theta = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    m = torch.arange(max_positions, dtype=torch.float64)
    return (m[:, None] * theta[None, :]).to(dtype)


def apply_rope(x, freqs, positions=None):
    if positions is None:
        positions = torch.arange(x.shape[-2])
    if positions.max() >= freqs.shape[0]:
        raise ValueError("position too large for the table")
    a = freqs[positions]
    cos, sin = torch.cos(a).to(x.dtype), torch.sin(a).to(x.dtype)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class RotaryCausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
        super().__init__(d_model, n_head, dropout)
        self.register_buffer("freqs", rope_frequencies(d_model // n_head, max_positions, base, torch.float64),
                             persistent=False)

    def forward(self, x, lengths=None):
        B, T, D = x.shape
        q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
        k = apply_rope(split_heads(self.key(x), self.n_head), self.freqs)
        v = split_heads(self.value(x), self.n_head)
        if lengths is None:
            mask = causal_mask(T)
        else:
            mask = combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(y)))
