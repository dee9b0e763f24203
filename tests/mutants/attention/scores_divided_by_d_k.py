"""scaled_dot_scores divides the dot products by d_k instead of by sqrt(d_k)."""
# target: attention.ipynb


def scaled_dot_scores(q, keys):
    return dot_scores(q, keys) / keys.shape[-1]

# autograder-hidden-canary-7d3e9a (never ships to students)
