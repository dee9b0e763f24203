"""experiment draws its keys from a generator of its own (make_rng(0)) instead of its rng argument: every call gives
the same samples whatever generator the caller passes, so repeating the experiment with other seeds repeats one
draw. Pass rng on to sample_keys."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def experiment(queries, mu, sigmas, values, a, b, num_samples, rng):
    keys = sample_keys(mu, sigmas, make_rng(0), num_samples)
    outputs, weights = attend_heads(queries, keys, values)
    return spread(outputs, (values[a] + values[b]) / 2), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
