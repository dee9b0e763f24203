"""The copy query points along key j (q = beta k_j): right for orthonormal keys, wrong in general position."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def copy_query(keys, j):
    return 20.0 * keys[j]

# autograder-hidden-canary-7d3e9a (never ships to students)
