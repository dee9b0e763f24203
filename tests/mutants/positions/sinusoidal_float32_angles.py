"""The sinusoidal angles t / 10000^(2i/d) are computed in float32 and only the result is cast to the requested dtype,
so a float64 table is off in its last digits: build the angles in float64 and cast at the end."""
# target: positions.py


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got {d}")
    angles = torch.arange(T, dtype=torch.float32)[:, None] / 10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    phi = torch.empty(T, d, dtype=torch.float32)
    phi[:, 0::2] = angles.sin()
    phi[:, 1::2] = angles.cos()
    return phi.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
