"""The heads are merged without moving the head axis back first (reshape of (B, H, T, d) straight to (B, T, H*d))."""
# target: masking.py


def merge_heads(x):
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)

# autograder-hidden-canary-7d3e9a (never ships to students)
