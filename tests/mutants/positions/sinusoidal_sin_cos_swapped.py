"""Sinusoidal embeddings with sin and cos swapped: the even columns hold cos and the odd columns sin."""
# target: positions.py


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    angles = torch.arange(T, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    phi = torch.empty(T, d, dtype=torch.float64)
    phi[:, 0::2] = angles.cos()
    phi[:, 1::2] = angles.sin()
    return phi.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
