"""The example for linear weights uses positive scores, for which linear weights are still valid weights."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def linear_weights_failure():
    return torch.tensor([1.0, 2.0, 3.0], dtype=DTYPE)

# autograder-hidden-canary-7d3e9a (never ships to students)
