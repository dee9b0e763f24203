"""RoPE positions start at 1 instead of 0: without explicit positions the first token is rotated by theta
instead of staying as it is."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    if positions is None:
        positions = torch.arange(1, x.shape[-2] + 1)
    angles = freqs[torch.as_tensor(positions)]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)

# autograder-hidden-canary-7d3e9a (never ships to students)
