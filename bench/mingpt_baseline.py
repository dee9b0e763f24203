"""The baseline of the throughput benchmark: a plain minGPT-style model and training loop.

What a straightforward implementation does: full-length padded batches from a shuffling DataLoader,
attention with ``masked_fill(-inf)`` and ``F.softmax``, the loss on every position but the pads,
AdamW with decay on the weight matrices, gradient clipping, the learning rate set every step.
Nothing here is tuned: it is the yardstick the reference trainer is measured against.
"""

from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset


class Attention(nn.Module):
    """Causal multi-head self-attention, (B, T, D) -> (B, T, D)."""

    def __init__(self, width: int, heads: int, block_size: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.register_buffer("mask", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q, k, v = (t.view(B, T, self.heads, D // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(D // self.heads)
        weights = F.softmax(scores.masked_fill(~self.mask[:T, :T], float("-inf")), dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(B, T, D))


class Block(nn.Module):
    """Pre-LayerNorm block: attention and a 4x GELU feed-forward, each with a residual."""

    def __init__(self, width: int, heads: int, block_size: int):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = Attention(width, heads, block_size)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class MinGPT(nn.Module):
    """(B, T) ids -> (B, T, V) logits and the mean loss over targets that are not pad (id 0)."""

    def __init__(self, vocab_size: int, block_size: int, layers: int, heads: int, width: int):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, width)
        self.pos = nn.Parameter(torch.zeros(1, block_size, width))
        self.blocks = nn.Sequential(*(Block(width, heads, block_size) for _ in range(layers)))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab_size, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.blocks(self.tok(idx) + self.pos[:, :idx.shape[1]])
        logits = self.head(self.ln(x))
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1), ignore_index=0)


def train_epochs(model: MinGPT, dataset: Dataset, epochs: int, batch_size: int, lr: float,
                 warmup_tokens: float, final_tokens: float) -> dict:
    """minGPT's loop for ``epochs`` epochs; returns {"seconds", "tokens", "real_tokens", "loss"}."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                  lr=lr, betas=(0.9, 0.95))
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=0)
    tokens, real, loss = 0, 0, torch.tensor(float("nan"))
    started = time.perf_counter()
    model.train()
    for _ in range(epochs):
        for x, y in loader:
            _, loss = model(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            tokens += y.numel()
            real += int((x != 0).sum())
            if tokens < warmup_tokens:
                scale = tokens / max(1, warmup_tokens)
            else:
                scale = max(0.1, 0.5 * (1 + math.cos(math.pi * min(1.0, (tokens - warmup_tokens)
                                                                   / max(1, final_tokens - warmup_tokens)))))
            for group in optimizer.param_groups:
                group["lr"] = lr * scale
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "tokens": tokens, "real_tokens": real, "loss": float(loss.detach())}
