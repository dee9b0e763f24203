"""Sinusoidal frequencies use the exponent i/d instead of 2i/d (10000^(i/d) with i the pair index), so the
wavelengths stop at 10000^(1/2) instead of reaching 10000."""
# target: positions.py


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    angles = torch.arange(T, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(d // 2, dtype=torch.float64) / d)
    phi = torch.empty(T, d, dtype=torch.float64)
    phi[:, 0::2] = angles.sin()
    phi[:, 1::2] = angles.cos()
    return phi.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
