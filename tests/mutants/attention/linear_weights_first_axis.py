"""linear_weights divides by the sum over the first axis instead of over each row's scores (the last axis)."""
# target: attention.ipynb


def linear_weights(scores):
    return scores / scores.sum(dim=0, keepdim=True)

# autograder-hidden-canary-7d3e9a (never ships to students)
