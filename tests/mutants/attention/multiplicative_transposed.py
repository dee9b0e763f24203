"""multiplicative_scores multiplies W on the wrong side (q^T W^T k): keys @ W instead of keys @ W.T."""
# target: attention.ipynb
# unnamed: it raises (shapes do not match) unless W is square, so no output is compared


def multiplicative_scores(q, W, keys):
    return dot_scores(q, keys @ W)

# autograder-hidden-canary-7d3e9a (never ships to students)
