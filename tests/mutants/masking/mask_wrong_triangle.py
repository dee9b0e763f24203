"""The causal mask is upper-triangular: each token attends to the future instead of the past."""
# target: masking.py


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()

# autograder-hidden-canary-7d3e9a (never ships to students)
