"""After the swap, x4' multiplies the swapped weights with the original (unswapped) sequence: use the swapped
sequence, x[[0, 2, 1, 3]]."""
# target: attention.ipynb


def swap_x2_x3(x, weights):
    order = torch.tensor([0, 2, 1, 3])
    weights_after = weights[order]
    return weights @ x, weights_after, weights_after @ x

# autograder-hidden-canary-7d3e9a (never ships to students)
