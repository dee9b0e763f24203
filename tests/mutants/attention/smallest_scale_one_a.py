"""smallest_scale compares B with a single A: it forgets that three A's share the rest of the weight."""
# target: attention.ipynb


def smallest_scale(p):
    return math.log(p / (1 - p))

# autograder-hidden-canary-7d3e9a (never ships to students)
