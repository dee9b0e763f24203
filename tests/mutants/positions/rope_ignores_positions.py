"""apply_rope ignores its positions argument and always rotates as if the tokens sat at 0..T-1, so decoding one
token at position t rotates it as position 0."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)

# autograder-hidden-canary-7d3e9a (never ships to students)
