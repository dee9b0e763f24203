"""sample_keys multiplies the noise by the covariance itself instead of by its Cholesky factor."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def sample_keys(mu, sigmas, rng, num_samples=1):
    noise = torch.randn(num_samples, *mu.shape, generator=rng, dtype=mu.dtype)
    return mu + torch.einsum("nij,snj->sni", sigmas, noise)

# autograder-hidden-canary-7d3e9a (never ships to students)
