"""self_attention normalises the columns of S (softmax over the queries, dim=-2) instead of each query's row."""
# target: attention.ipynb


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = torch.softmax(Q @ K.transpose(-2, -1), dim=-2)
    return A @ V, A

# autograder-hidden-canary-7d3e9a (never ships to students)
