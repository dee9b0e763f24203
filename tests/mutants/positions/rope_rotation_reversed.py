"""RoPE rotates each pair by -m theta (clockwise) instead of +m theta: out[2i] = x[2i] cos + x[2i+1] sin."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]] if positions is None else freqs[torch.as_tensor(positions)]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos + odd * sin, -even * sin + odd * cos), dim=-1).flatten(-2)

# autograder-hidden-canary-7d3e9a (never ships to students)
