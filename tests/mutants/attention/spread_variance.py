"""spread returns the mean squared distance, without the square root."""
# target: attention.ipynb


def spread(outputs, target):
    return float(((outputs - target) ** 2).sum(dim=-1).mean())

# autograder-hidden-canary-7d3e9a (never ships to students)
