"""copy_query takes the lead log(99 (n - 1)) without guarding n = 1: for a single key that is log(0), and the query
cannot be built (any query copies the only key)."""
# target: attention.ipynb
# unnamed: it raises on one key, so there is no output to match


def copy_query(keys, j):
    n = keys.shape[0]
    target = torch.zeros(n, dtype=keys.dtype)
    target[j] = math.log(99 * (n - 1)) + 1.0
    return torch.linalg.pinv(keys) @ target

# autograder-hidden-canary-7d3e9a (never ships to students)
