"""self_attention divides the scores by sqrt(d_k), as transformers do, but this part asks for the lecture's plain
form S = Q K^T without scaling."""
# target: attention.ipynb


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(K.shape[-1]), dim=-1)
    return A @ V, A

# autograder-hidden-canary-7d3e9a (never ships to students)
