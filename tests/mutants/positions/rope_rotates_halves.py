"""RoPE rotates the two halves (feature i with feature i + head_dim/2, the GPT-NeoX layout) instead of the
adjacent pairs (2i, 2i+1) this assignment specifies."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]] if positions is None else freqs[torch.as_tensor(positions)]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    half = x.shape[-1] // 2
    first, second = x[..., :half], x[..., half:]
    return torch.cat((first * cos - second * sin, first * sin + second * cos), dim=-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
