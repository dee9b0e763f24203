"""self_attention computes S = K Q^T (rows are keys) instead of Q K^T: row i of S must hold query i's scores."""
# target: attention.ipynb


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = torch.softmax(K @ Q.transpose(-2, -1), dim=-1)
    return A @ V, A

# autograder-hidden-canary-7d3e9a (never ships to students)
