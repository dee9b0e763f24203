"""causal_mask marks the future as True (triu(diagonal=1), PyTorch's "True = masked" convention) instead of the
allowed past: here True means "may attend", so return the lower triangle with the diagonal."""
# target: masking.py


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu(1)

# autograder-hidden-canary-7d3e9a (never ships to students)
