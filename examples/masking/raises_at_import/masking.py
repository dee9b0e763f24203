"""A submission that crashes while being imported (a debugging line left at the top level)."""

import torch

scores = torch.randn(2, 3)
print(scores @ scores)  # shapes (2, 3) @ (2, 3): raises at import


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
