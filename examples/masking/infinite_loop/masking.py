"""A submission that never finishes importing: an experiment loop left at the top level."""

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


step = 0
while True:  # "train until it converges"
    step += 1
