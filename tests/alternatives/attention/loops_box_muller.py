"""Python loops over keys and heads, normal noise made from uniforms with the Box-Muller transform, copy_query
through a QR factorisation, and every designed matrix solved for by least squares from the outputs it must give.

Style: a student who thinks one key at a time (loops where the others broadcast) and who builds what the library
would give from first principles: Box-Muller turns uniform draws from rng (torch.rand with generator=rng) into
standard normal noise, a valid way to draw N(mu_i, sigma_i) keys from rng that the spec does not exclude.
copy_query solves keys @ q = scores with keys^T = Q R (q = Q R^-T scores); kqv_design writes the queries and values
each token must have and solves M X = targets with a pseudo-inverse. The loops run over the n keys or H heads only
(never over samples), so the experiments stay fast. Written from scratch for this catalogue.
"""
# target: attention.ipynb


def dot_scores(q, keys):
    return torch.stack([(keys[..., i, :] * q).sum(-1) for i in range(keys.shape[-2])], dim=-1)


def multiplicative_scores(q, W, keys):
    qW = torch.matmul(q, W)
    return torch.stack([(keys[..., i, :] * qW).sum(-1) for i in range(keys.shape[-2])], dim=-1)


def scaled_dot_scores(q, keys):
    return dot_scores(q, keys) / keys.shape[-1] ** 0.5


def _weights(scores):
    return torch.exp(scores - torch.logsumexp(scores, dim=-1, keepdim=True))


def dot_product_attention(q, keys, values):
    weights = _weights(dot_scores(q, keys))
    output = sum(weights[..., i, None] * values[..., i, :] for i in range(weights.shape[-1]))
    return output, weights


def aaba(q):
    scores = dot_scores(q, X_AABA)
    output, weights = dot_product_attention(q, X_AABA, X_AABA)
    average = sum(X_AABA[i] for i in range(4)) / 4
    return scores, weights, output, average


def smallest_scale(p):
    return math.log(p / (1 - p)) + math.log(3)


def linear_weights(scores):
    total = scores.sum(dim=-1, keepdim=True)
    return scores / total


def linear_weights_failure():
    return torch.tensor([-1.0, 2.0], dtype=DTYPE)  # weights -1 and 2


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = torch.matmul(X, Wq), torch.matmul(X, Wk), torch.matmul(X, Wv)
    A = _weights(torch.matmul(Q, K.transpose(-1, -2)))
    return torch.matmul(A, V), A


def swap_x2_x3(x, weights):
    after = weights.clone()
    after[1], after[2] = weights[2], weights[1]
    x_after = x.clone()
    x_after[1], x_after[2] = x[2], x[1]
    return weights @ x, after, after @ x_after


def copy_query(keys, j):
    n = keys.shape[0]
    scores = torch.zeros(n, 1, dtype=keys.dtype)
    scores[j] = math.log(99 * max(n - 1, 1)) + 0.5
    Q, R = torch.linalg.qr(keys.T)  # keys = R^T Q^T, so keys @ (Q y) = R^T y
    y = torch.linalg.solve_triangular(R.T, scores, upper=False)
    return (Q @ y)[:, 0]


def average_query(keys, a, b):
    n = keys.shape[0]
    scores = torch.zeros(n, dtype=keys.dtype)
    scores[a] = scores[b] = math.log(100 * n)
    return torch.linalg.pinv(keys) @ scores


def sample_keys(mu, sigmas, rng, num_samples=1):
    n, d = mu.shape
    u1 = torch.rand(num_samples, n, d, generator=rng, dtype=mu.dtype)
    u2 = torch.rand(num_samples, n, d, generator=rng, dtype=mu.dtype)
    z = torch.sqrt(-2.0 * torch.log1p(-u1)) * torch.cos(2 * math.pi * u2)  # 1 - u1 in (0, 1]: log never sees 0
    keys = []
    for i in range(n):
        L = torch.linalg.cholesky(sigmas[i])
        keys.append(mu[i] + z[:, i] @ L.T)
    return torch.stack(keys, dim=1)


def single_head_query(mu, a, b):
    return average_query(mu, a, b)


def attend_heads(queries, keys, values):
    outputs, weights = [], []
    for h in range(queries.shape[0]):
        out, w = dot_product_attention(queries[h], keys, values)
        outputs.append(out)
        weights.append(w)
    return sum(outputs) / len(outputs), torch.stack(weights, dim=-2)


def spread(outputs, target):
    squared = ((outputs - target) ** 2).sum(dim=1)
    return squared.mean().sqrt().item()


def experiment(queries, mu, sigmas, values, a, b, num_samples, rng):
    keys = sample_keys(mu, sigmas, rng, num_samples)
    outputs, weights = attend_heads(queries, keys, values)
    return spread(outputs, (values[a] + values[b]) / 2), weights


def multihead_queries(mu, a, b):
    first, second = (copy_query(mu, j) for j in (a, b))
    return first, second


def kqv_design(u):
    u_a, u_b, u_c, u_d = u
    X = torch.stack([u_d + u_b, u_a, u_c + u_b], dim=1)  # the tokens x1, x2, x3 as columns
    zero = torch.zeros_like(u_a)
    K = torch.eye(u.shape[1], dtype=u.dtype)
    Q = torch.stack([2 * u_c, 2 * u_b, zero], dim=1) @ torch.linalg.pinv(X)  # q1 picks x3; q2 picks x1 and x3
    V = torch.stack([u_b + u_c, zero, u_b - u_c], dim=1) @ torch.linalg.pinv(X)
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
