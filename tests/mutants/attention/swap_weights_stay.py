"""After swapping x2 and x3 the weights stay with the positions, as if attention looked at positions, not content."""
# target: attention.ipynb


def swap_x2_x3(x, weights):
    order = torch.tensor([0, 2, 1, 3])
    return weights @ x, weights, weights @ x[order]

# autograder-hidden-canary-7d3e9a (never ships to students)
