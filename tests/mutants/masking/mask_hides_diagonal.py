"""The causal mask hides the diagonal: a token cannot attend to itself (tril(-1) instead of tril())."""
# target: masking.py


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(-1)

# autograder-hidden-canary-7d3e9a (never ships to students)
