"""smallest_scale returns e^s = 3p / (1 - p) instead of s: take the logarithm at the end."""
# target: attention.ipynb


def smallest_scale(p):
    return 3 * p / (1 - p)

# autograder-hidden-canary-7d3e9a (never ships to students)
