"""dot_scores multiplies keys @ q, which only works for a single query: a batch of queries is not one column each."""
# target: attention.ipynb
# unnamed: it raises on every batched input, so no output is compared


def dot_scores(q, keys):
    return keys @ q

# autograder-hidden-canary-7d3e9a (never ships to students)
