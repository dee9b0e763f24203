"""sample_keys draws from torch's global generator and ignores rng, so the same seed does not give the same keys."""
# target: attention.ipynb
# unnamed: only properties of its design are graded (a correct answer may differ from the reference's)


def sample_keys(mu, sigmas, rng, num_samples=1):
    factors = torch.linalg.cholesky(sigmas)
    noise = torch.randn(num_samples, *mu.shape, dtype=mu.dtype)
    return mu + torch.einsum("nij,snj->sni", factors, noise)

# autograder-hidden-canary-7d3e9a (never ships to students)
