"""The 2x2 blocks of the shift operator are transposed ([[cos, sin], [-sin, cos]]): that matrix moves the
embeddings k positions back, not forward."""
# target: positions.py


def shift_operator(k, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    angle = k / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    even = torch.arange(0, d, 2)
    operator = torch.zeros(d, d, dtype=torch.float64)
    operator[even, even] = angle.cos()
    operator[even, even + 1] = angle.sin()
    operator[even + 1, even] = -angle.sin()
    operator[even + 1, even + 1] = angle.cos()
    return operator.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
