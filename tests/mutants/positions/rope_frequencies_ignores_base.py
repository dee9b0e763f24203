"""rope_frequencies ignores its base argument and always uses 10000: theta_i = base^(-2i/head_dim) with the base
it is given (models such as Llama use other bases)."""
# target: positions.py


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    theta = 10000.0 ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.outer(torch.arange(max_positions, dtype=torch.float64), theta).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
