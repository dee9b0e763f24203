"""spread returns the mean distance instead of the root of the mean squared distance: square the distances, average,
then take the square root."""
# target: attention.ipynb


def spread(outputs, target):
    return float((outputs - target).norm(dim=-1).mean())

# autograder-hidden-canary-7d3e9a (never ships to students)
