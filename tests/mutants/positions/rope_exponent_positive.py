"""rope_frequencies raises the base to +2i/head_dim instead of -2i/head_dim: the angles m * base^(2i/head_dim) grow
with the pair index up to nearly base radians per position, where theta_i = base^(-2i/head_dim) must shrink from 1
radian to nearly 1/base."""
# target: positions.py
# seen in: public CS336 assignment 1 student repositories (torch.pow(theta, 2k / d_k) multiplied into the positions,
# the reciprocal of the frequency forgotten)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, got {head_dim}")
    theta = base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.outer(torch.arange(max_positions, dtype=torch.float64), theta).to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
