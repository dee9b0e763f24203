"""A submission with a syntax error: nothing can be imported, so nothing can be graded."""

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(


def padding_mask(lengths, T):
    return torch.arange(T)[None, :] < lengths[:, None]
