"""rope_offset_scores rotates the key as if it sat at position 0 whatever n is, so the curve does not move with
the key."""
# target: positions.ipynb
# unnamed: graded by a property of the curve (it moves with the key), not by the reference's values


def rope_offset_scores(q, k, freqs, n=0):
    queries = apply_rope(q.expand(freqs.shape[0], -1), freqs)
    return queries @ k

# autograder-hidden-canary-7d3e9a (never ships to students)
