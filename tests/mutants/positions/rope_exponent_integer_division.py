"""rope_frequencies computes the exponent 2i/head_dim with integer division (//) on integer pair indices, so it is 0
for every pair: every pair turns by one radian per position (theta_i = 1) instead of theta_i = base^(-2i/head_dim);
divide in floating point."""
# target: positions.py
# seen in: public CS336 assignment 1 student repositories (the RoPE exponent written as k * 2 // d_k)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    theta = base ** -(torch.arange(0, head_dim, 2) // head_dim).to(torch.float64)
    return torch.outer(torch.arange(max_positions, dtype=torch.float64), theta).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
