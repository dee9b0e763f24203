"""Sinusoidal embeddings with the sines and cosines concatenated ([sin of every frequency | cos of every frequency],
the tensor2tensor layout) instead of interleaved: column 2i must hold sin(t w_i) and column 2i + 1 cos(t w_i)."""
# target: positions.py


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    angles = torch.arange(T, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    return torch.cat((angles.sin(), angles.cos()), dim=-1).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
