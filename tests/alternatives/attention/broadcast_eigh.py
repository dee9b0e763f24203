"""Broadcasting and sums instead of matrix products, a hand-written stable softmax, least squares for copy_query,
keys sampled with an eigendecomposition factor, and a key-query-value design that keeps Q = I and designs K.

Style: NumPy habits (CS231n's vectorised assignments): products written as elementwise multiplications summed over
an axis, the softmax spelled out (subtract the maximum, exponentiate, normalise). sample_keys factors each covariance
as V diag(lambda) V^T and multiplies standard normal noise by V diag(sqrt(lambda)), another valid square root of the
covariance than Cholesky's (the spec asks for keys ~ N(mu_i, sigma_i), drawn from rng, not for one factor), so its
samples differ from the reference's while their distribution does not. copy_query uses torch.linalg.lstsq, and the
reported spreads are computed again below with these functions. Written from scratch for this catalogue.
"""
# target: attention.ipynb


def _softmax(scores):
    shifted = scores - scores.max(dim=-1, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def dot_scores(q, keys):
    return (keys * q.unsqueeze(-2)).sum(dim=-1)


def multiplicative_scores(q, W, keys):
    transformed = keys @ W.T  # row n is W k_n, of width d_q
    return (transformed * q.unsqueeze(-2)).sum(dim=-1)


def scaled_dot_scores(q, keys):
    return dot_scores(q / math.sqrt(keys.shape[-1]), keys)


def dot_product_attention(q, keys, values):
    weights = _softmax(dot_scores(q, keys))
    return (weights.unsqueeze(-1) * values).sum(dim=-2), weights


def aaba(q):
    output, weights = dot_product_attention(q, X_AABA, X_AABA)
    return dot_scores(q, X_AABA), weights, output, X_AABA.mean(0)


def smallest_scale(p):
    return math.log(3 * p) - math.log(1 - p)


def linear_weights(scores):
    return scores / scores.sum(-1)[..., None]


def linear_weights_failure():
    return torch.tensor([1.0, -1.0, 0.5], dtype=DTYPE)


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = _softmax((Q.unsqueeze(-2) * K.unsqueeze(-3)).sum(-1))  # [i, j] = q_i . k_j
    return (A.unsqueeze(-1) * V.unsqueeze(-3)).sum(-2), A


def swap_x2_x3(x, weights):
    P = torch.eye(4, dtype=x.dtype)[[0, 2, 1, 3]]
    return (weights[:, None] * x).sum(0), P @ weights, ((P @ weights)[:, None] * (P @ x)).sum(0)


def copy_query(keys, j):
    n = keys.shape[0]
    wanted = torch.zeros(n, 1, dtype=keys.dtype)
    wanted[j] = math.log(100.0 * n)  # weight 100 n / (100 n + n - 1) > 0.99
    return torch.linalg.lstsq(keys, wanted).solution[:, 0]


def average_query(keys, a, b):
    return (math.log(100.0 * keys.shape[0]) + 1.0) * keys[[a, b]].sum(0)


def sample_keys(mu, sigmas, rng, num_samples=1):
    eigenvalues, eigenvectors = torch.linalg.eigh(sigmas)
    factors = eigenvectors * eigenvalues.clamp_min(0).sqrt().unsqueeze(-2)  # V diag(sqrt(lambda)): F F^T = sigma
    noise = torch.randn(num_samples, *mu.shape, generator=rng, dtype=mu.dtype)
    return mu + (factors.unsqueeze(0) * noise.unsqueeze(-2)).sum(-1)


def single_head_query(mu, a, b):
    return average_query(mu, a, b)


def attend_heads(queries, keys, values):
    scores = (keys.unsqueeze(-3) * queries.unsqueeze(-2)).sum(-1)  # (..., H, n)
    weights = _softmax(scores)
    outputs = (weights.unsqueeze(-1) * values).sum(-2)  # (..., H, d_v)
    return outputs.mean(-2), weights


def spread(outputs, target):
    return math.sqrt(float(((outputs - target) ** 2).sum()) / outputs.shape[0])


def experiment(queries, mu, sigmas, values, a, b, num_samples, rng):
    keys = sample_keys(mu, sigmas, rng, num_samples)
    outputs, weights = attend_heads(queries, keys, values)
    return spread(outputs, values[[a, b]].mean(0)), weights


def multihead_queries(mu, a, b):
    return copy_query(mu, a), copy_query(mu, b)


def kqv_design(u):
    u_a, u_b, u_c, u_d = u
    size = float(u_a.norm()) ** 2
    Q = torch.eye(u.shape[1], dtype=u.dtype)  # queries are the tokens themselves: q1 = u_d + u_b, q2 = u_a
    K = (torch.outer(u_a, u_b) + torch.outer(u_d, u_c)) / size  # k1 = u_a, k2 = 0, k3 = u_a + u_d
    V = (torch.outer(u_b, u_b) + torch.outer(u_c, u_d - u_c)) / size  # v1 = u_b + u_c, v3 = u_b - u_c
    return K, Q, V


# the notebook's experiment cells, run again with the functions above (as they run after a student's definitions)
q_single = single_head_query(MU, A_INDEX, B_INDEX)[None]
spread_single_i, weights_single_i = experiment(q_single, MU, SIGMAS_I, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(1))
spread_single_ii, weights_single_ii = experiment(q_single, MU, SIGMAS_II, VALUES, A_INDEX, B_INDEX, N_SAMPLES,
                                                 make_rng(2))
q_multi = torch.stack(multihead_queries(MU, A_INDEX, B_INDEX))
spread_multi_i, weights_multi_i = experiment(q_multi, MU, SIGMAS_I, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(3))
spread_multi_ii, weights_multi_ii = experiment(q_multi, MU, SIGMAS_II, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(4))

# autograder-hidden-canary-7d3e9a (never ships to students)
