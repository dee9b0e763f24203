"""apply_rope rotates x in place (x[..., 0::2] = ...) and returns it: the output is right, but the caller's queries
or keys are rotated too, and rotating them again (a second call, a cached key) rotates them twice. Build a new
tensor (torch.stack of the two rotated halves)."""
# target: positions.py
# unnamed: its output is right; only the caller's tensor after the call tells it


def apply_rope(x, freqs, positions=None):
    if 2 * freqs.shape[-1] != x.shape[-1]:
        raise ValueError(f"x has {x.shape[-1]} features but freqs has {freqs.shape[-1]} angles per position")
    limit, T = freqs.shape[0], x.shape[-2]
    if positions is None:
        if T > limit:
            raise ValueError(f"a sequence of {T} positions does not fit the table of max_positions={limit}")
        angles = freqs[:T]
    else:
        positions = torch.as_tensor(positions, device=freqs.device)
        if positions.numel() and (int(positions.min()) < 0 or int(positions.max()) >= limit):
            raise ValueError(f"positions must lie in 0..{limit - 1}")
        angles = freqs[positions]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = even * cos - odd * sin
    x[..., 1::2] = even * sin + odd * cos
    return x

# autograder-hidden-canary-7d3e9a (never ships to students)
