"""multiplicative_scores treats q as one vector (keys W^T q, written keys @ W.T @ q): right for a single query, wrong
for a batch of queries (..., d_q), which the docstring allows."""
# target: attention.ipynb
# unnamed: on a batch of queries it fails or returns another shape, so there is no output to match


def multiplicative_scores(q, W, keys):
    return keys @ W.T @ q

# autograder-hidden-canary-7d3e9a (never ships to students)
