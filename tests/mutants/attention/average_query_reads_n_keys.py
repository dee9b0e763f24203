"""average_query sizes its scale from the notebook's global N_KEYS (the experiment's 5 keys) instead of the keys it is
given (keys.shape[0]): right for the notebook's setup, too small for more keys. An answer must read its arguments,
not the notebook's globals."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def average_query(keys, a, b):
    beta = math.log(100 * N_KEYS)
    return beta * (keys[a] + keys[b])

# autograder-hidden-canary-7d3e9a (never ships to students)
