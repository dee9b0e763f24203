"""A student's positions.py (correct, written differently from the reference: complex numbers for RoPE,
block_diag for the shift operator)."""

import torch
from masking import CausalSelfAttention, causal_mask, combined_mask, merge_heads, scaled_dot_product_attention
from masking import split_heads
from torch import nn


def attention_ffn(x, weights):
    out, _ = scaled_dot_product_attention(x @ weights["query"], x @ weights["key"], x @ weights["value"])
    return (out @ weights["ff_in"]).clamp_min(0) @ weights["ff_out"]


def permute_check(x, perm, weights, positions=None):
    E = torch.zeros_like(x[..., :, :]) if positions is None else positions
    gap = attention_ffn(x[..., perm, :] + E, weights) - attention_ffn(x + E, weights)[..., perm, :]
    return gap.abs().max().item()


class LearnedPositions(nn.Module):
    def __init__(self, block_size, d_model):
        super().__init__()
        self.block_size = block_size
        self.weight = nn.Parameter(torch.randn(block_size, d_model) * 0.02)

    def forward(self, x):
        if x.size(1) > self.block_size:
            raise ValueError(f"learned positions only exist for {self.block_size} positions (block_size), got "
                             f"{x.size(1)}: they cannot extrapolate")
        return x + self.weight[: x.size(1)].unsqueeze(0)


def _rates(d, base=10000.0):
    return torch.pow(torch.tensor(base, dtype=torch.float64), -torch.arange(0, d, 2, dtype=torch.float64) / d)


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2 == 1:
        raise ValueError("d must be even")
    angles = torch.arange(T, dtype=torch.float64).unsqueeze(1) * _rates(d)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(T, d).to(dtype)


def shift_operator(k, d, dtype=torch.float32):
    if d % 2:
        raise ValueError("d must be even")
    blocks = [torch.tensor([[c, -s], [s, c]], dtype=torch.float64)
              for c, s in zip(torch.cos(k * _rates(d)).tolist(), torch.sin(k * _rates(d)).tolist(), strict=True)]
    return torch.block_diag(*blocks).to(dtype)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError("head_dim must be even")
    return (torch.arange(max_positions, dtype=torch.float64)[:, None] * _rates(head_dim, base)).to(dtype)


def apply_rope(x, freqs, positions=None):
    if 2 * freqs.shape[-1] != x.shape[-1]:
        raise ValueError(f"freqs is for head_dim {2 * freqs.shape[-1]}, x has {x.shape[-1]} features")
    if positions is None:
        if x.shape[-2] > freqs.shape[0]:
            raise ValueError(f"only {freqs.shape[0]} positions in the table")
        positions = torch.arange(x.shape[-2])
    where = torch.as_tensor(positions)
    if where.numel() and (int(where.min()) < 0 or int(where.max()) >= freqs.shape[0]):
        raise ValueError(f"positions must lie in 0..{freqs.shape[0] - 1}, the table's rows")
    angles = freqs[positions].to(torch.float64)
    pairs = torch.view_as_complex(x.to(torch.float64).reshape(*x.shape[:-1], -1, 2).contiguous())
    rotated = torch.view_as_real(pairs * torch.polar(torch.ones_like(angles), angles))
    return rotated.reshape(x.shape).to(x.dtype)


class RotaryCausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
        super().__init__(d_model, n_head, dropout)
        self.register_buffer("freqs", rope_frequencies(d_model // n_head, max_positions, base, torch.float64),
                             persistent=False)

    def forward(self, x, lengths=None):
        T = x.shape[1]
        q = apply_rope(split_heads(self.query(x), self.n_head), self.freqs)
        k = apply_rope(split_heads(self.key(x), self.n_head), self.freqs)
        v = split_heads(self.value(x), self.n_head)
        mask = causal_mask(T, x.device) if lengths is None else combined_mask(lengths, T)
        out, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(out)))
