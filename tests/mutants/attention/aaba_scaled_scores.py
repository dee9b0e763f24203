"""aaba uses the scaled scores (divided by sqrt(2)) instead of the plain dot products this example asks for."""
# target: attention.ipynb


def aaba(q):
    scores = scaled_dot_scores(q, X_AABA)
    weights = torch.softmax(scores, dim=-1)
    return scores, weights, weights @ X_AABA, X_AABA.mean(dim=0)

# autograder-hidden-canary-7d3e9a (never ships to students)
