"""apply_rope lets the position max_positions through (it checks position > max_positions, not >=): the table's
rows are 0 .. max_positions - 1, so the lookup fails with an IndexError instead of the documented ValueError."""
# target: positions.py
# unnamed: only the exception it raises is checked, not a value to match

_correct_apply_rope = apply_rope


def apply_rope(x, freqs, positions=None):
    if positions is not None:
        positions = torch.as_tensor(positions, device=freqs.device)
        if positions.numel() and (int(positions.min()) < 0 or int(positions.max()) > freqs.shape[0]):
            raise ValueError(f"positions must lie in 0..{freqs.shape[0]}")
        angles = freqs[positions]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)
    return _correct_apply_rope(x, freqs)

# autograder-hidden-canary-7d3e9a (never ships to students)
