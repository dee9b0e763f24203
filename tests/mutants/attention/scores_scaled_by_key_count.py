"""scaled_dot_scores divides by the square root of the number of keys (keys.shape[-2]) instead of the key width d_k
(keys.shape[-1])."""
# target: attention.ipynb


def scaled_dot_scores(q, keys):
    return dot_scores(q, keys) / math.sqrt(keys.shape[-2])

# autograder-hidden-canary-7d3e9a (never ships to students)
