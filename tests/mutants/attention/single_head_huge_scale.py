"""The single-head query uses a huge scale (beta = 10^4), which magnifies even tiny key noise into flips."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def single_head_query(mu, a, b):
    return 1e4 * (mu[a] + mu[b])

# autograder-hidden-canary-7d3e9a (never ships to students)
