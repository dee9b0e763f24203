"""sinusoidal puts the column index j in the exponent (t / 10000^(2j/d) for every column) instead of the pair index
i = j // 2: the sine of column 2i and the cosine of column 2i + 1 share the frequency 1 / 10000^(2i/d), and with j
the frequencies fall twice as fast and differ within a pair."""
# target: positions.py
# seen in: public "Attention is all you need" reimplementations and course notebooks (pos / 10000^(2 * j / d_model)
# for j in range(d_model), where the correct tables use 2 * (j // 2))


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"d must be even, got d={d}")
    columns = torch.arange(d, dtype=torch.float64)
    angles = torch.arange(T, dtype=torch.float64)[:, None] / SINUSOIDAL_BASE ** (2 * columns / d)
    phi = angles.clone()
    phi[:, 0::2] = angles[:, 0::2].sin()
    phi[:, 1::2] = angles[:, 1::2].cos()
    return phi.to(dtype)

# autograder-hidden-canary-7d3e9a (never ships to students)
