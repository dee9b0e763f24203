"""sinusoidal leaves the row of position 0 all zeros: sin(0) is 0 but cos(0) is 1, so the odd columns of row 0
must hold 1 (fill row 0 like every other row; only the sines vanish there)."""
# target: positions.py
# seen in: public "Attention is all you need" reimplementations and course notebooks (the table built row by row with
# a zero row for pos == 0, then sin/cos applied to rows 1: only)


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got d={d}")
    angles = torch.arange(T, dtype=torch.float64)[:, None] / SINUSOIDAL_BASE ** (
        torch.arange(0, d, 2, dtype=torch.float64) / d)
    phi = torch.zeros(T, d, dtype=torch.float64)
    phi[1:, 0::2] = angles[1:].sin()
    phi[1:, 1::2] = angles[1:].cos()
    return phi.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
