"""experiment draws a fixed 10 key sets (left over from debugging) instead of num_samples."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def experiment(queries, mu, sigmas, values, a, b, num_samples, rng):
    keys = sample_keys(mu, sigmas, rng, 10)
    outputs, weights = attend_heads(queries, keys, values)
    return spread(outputs, (values[a] + values[b]) / 2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
