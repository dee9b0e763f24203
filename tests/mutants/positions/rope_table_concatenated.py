"""apply_rope takes its cos and sin from torch.cat((angles, angles)), the table of the rotate-half layout, while it
rotates adjacent pairs: pair (2i, 2i+1) must turn by angle i, so repeat each angle twice (repeat_interleave(2)) or
rotate x[..., 0::2] and x[..., 1::2] by angles[..., i]."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]] if positions is None else freqs[torch.as_tensor(positions)]
    table = torch.cat((angles, angles), dim=-1)
    cos, sin = table.cos().to(x.dtype), table.sin().to(x.dtype)
    rotated = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * cos + rotated * sin

# autograder-hidden-canary-7d3e9a (never ships to students)
