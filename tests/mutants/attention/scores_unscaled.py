"""scaled_dot_scores forgets to divide by sqrt(d_k): it returns the plain dot products."""
# target: attention.ipynb


def scaled_dot_scores(q, keys):
    return dot_scores(q, keys)

# autograder-hidden-canary-7d3e9a (never ships to students)
