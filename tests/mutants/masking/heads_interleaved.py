"""The heads are interleaved (view as (B, T, d, H)): head h gets features h, h + H, h + 2H, ... instead of the
contiguous block h * d ... (h + 1) * d - 1; view as (B, T, H, d) and transpose."""
# target: masking.py


def split_heads(x, n_head):
    B, T, D = x.shape
    return x.view(B, T, D // n_head, n_head).permute(0, 3, 1, 2)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d)

# autograder-hidden-canary-7d3e9a (never ships to students)
