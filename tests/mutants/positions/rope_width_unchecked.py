"""apply_rope never checks that freqs has head_dim // 2 angles per position: a table built for another head width
fails deep inside the rotation with a broadcasting error instead of a ValueError that says what to build."""
# target: positions.py
# unnamed: caught by the error it fails to raise, not by an output


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]] if positions is None else freqs[torch.as_tensor(positions)]
    if positions is None and x.shape[-2] > freqs.shape[0]:
        raise ValueError(f"a sequence of {x.shape[-2]} positions does not fit the table of "
                         f"max_positions={freqs.shape[0]}")
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)

# autograder-hidden-canary-7d3e9a (never ships to students)
