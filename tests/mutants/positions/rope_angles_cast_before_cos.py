"""apply_rope casts the angles to x's dtype before taking cos and sin: in float32, an angle in the thousands (a
position far into a long context) keeps only about three decimals, so the rotation is off. Take cos and sin of the
angles as given (float64), then cast the results to x's dtype."""
# target: positions.py


def apply_rope(x, freqs, positions=None):
    angles = freqs[: x.shape[-2]] if positions is None else freqs[torch.as_tensor(positions)]
    angles = angles.to(x.dtype)
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)

# autograder-hidden-canary-7d3e9a (never ships to students)
