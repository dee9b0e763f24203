"""The plain average is taken over the two embeddings A and B, not over the four tokens of A A B A."""
# target: attention.ipynb


def aaba(q):
    output, weights = dot_product_attention(q, X_AABA, X_AABA)
    return dot_scores(q, X_AABA), weights, output, (EMBED_A + EMBED_B) / 2

# autograder-hidden-canary-7d3e9a (never ships to students)
