"""An odd embedding width is accepted silently (the last column is a sine without its cosine) instead of raising
a ValueError."""
# target: positions.py
# unnamed: only the ValueError for an odd width is checked: there is no reference output


def sinusoidal(T, d, dtype=torch.float32):
    angles = torch.arange(T, dtype=torch.float64)[:, None] / 10000 ** (
        torch.arange(0, d, 2, dtype=torch.float64) / d)
    phi = torch.empty(T, d + d % 2, dtype=torch.float64)
    phi[:, 0::2] = angles.sin()
    phi[:, 1::2] = angles.cos()
    return phi[:, :d].to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
