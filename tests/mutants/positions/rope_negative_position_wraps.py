"""apply_rope does not refuse a negative position: freqs[-1] is the table's last row, so position -1 is silently
rotated as position max_positions - 1 instead of raising the documented ValueError."""
# target: positions.py
# unnamed: only whether it raises is checked, not a value to match

_correct_apply_rope = apply_rope


def apply_rope(x, freqs, positions=None):
    if positions is not None and torch.as_tensor(positions).numel() and int(torch.as_tensor(positions).min()) < 0:
        angles = freqs[torch.as_tensor(positions, device=freqs.device)]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)
    return _correct_apply_rope(x, freqs, positions)

# autograder-hidden-canary-7d3e9a (never ships to students)
