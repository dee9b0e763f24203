"""rope_frequencies counts positions from 1 (torch.arange(1, max_positions + 1)): row m of the table must hold the
angles of position m, starting with m = 0 (all zeros)."""
# target: positions.py


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.outer(torch.arange(1, max_positions + 1, dtype=torch.float64), theta).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
