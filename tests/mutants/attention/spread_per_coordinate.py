"""spread averages the squared errors over every coordinate too (.mean() of the whole tensor), instead of summing
over d_v and averaging over the samples only."""
# target: attention.ipynb


def spread(outputs, target):
    return float(((outputs - target) ** 2).mean().sqrt())

# autograder-hidden-canary-7d3e9a (never ships to students)
