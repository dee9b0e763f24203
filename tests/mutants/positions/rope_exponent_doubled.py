"""RoPE frequencies double the exponent (theta_i = base^(-4i/head_dim)): torch.arange(0, head_dim, 2) already
counts 2i, so it is not multiplied by 2 again."""
# target: positions.py


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    theta = base ** (-2 * torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.outer(torch.arange(max_positions, dtype=torch.float64), theta).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
