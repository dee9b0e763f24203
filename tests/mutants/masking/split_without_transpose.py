"""The heads are split with a plain view to (B, H, T, d), which mixes positions and features."""
# target: masking.py


def split_heads(x, n_head):
    B, T, D = x.shape
    return x.reshape(B, n_head, T, D // n_head)

# autograder-hidden-canary-7d3e9a (never ships to students)
