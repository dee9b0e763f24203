"""Both heads use the single-head query (q1 = q2), so they flip together when key a's length varies."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def multihead_queries(mu, a, b):
    return single_head_query(mu, a, b), single_head_query(mu, a, b)

# autograder-hidden-canary-7d3e9a (never ships to students)
