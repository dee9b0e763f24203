"""The average query k_a + k_b is not scaled up, so the other keys keep much of the weight."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def average_query(keys, a, b):
    return keys[a] + keys[b]

# autograder-hidden-canary-7d3e9a (never ships to students)
