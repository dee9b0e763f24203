"""einsum for every contraction, copy_query solved through the Gram matrix, noise multiplied as row vectors (z @ L^T),
a loop over heads in attend_heads, and larger (still valid) scales for the designed queries.

Style: a student fluent in index notation (Rocktaschel's "einsum is all you need"): scores, attention outputs and
self-attention are einsum expressions. copy_query picks target scores and takes the minimum-norm solution of
keys @ q = scores as q = keys^T (keys keys^T)^-1 scores instead of a pseudo-inverse; average_query and the
multi-head queries use their own margins (weight 1 / (1 + n / 400) outside the chosen keys), so the notebook's
reported spreads are computed again below with these queries, as a student's notebook computes them after its own
definitions. kqv_design keeps K = I but gives query 1 a stronger preference (u_c - u_d) and builds V from other outer
products. Written from scratch for this catalogue.
"""
# target: attention.ipynb


def dot_scores(q, keys):
    return torch.einsum("...nd,...d->...n", keys, q)


def multiplicative_scores(q, W, keys):
    return torch.einsum("...i,ij,...nj->...n", q, W, keys)


def scaled_dot_scores(q, keys):
    return dot_scores(q, keys) * keys.shape[-1] ** -0.5


def dot_product_attention(q, keys, values):
    weights = torch.softmax(dot_scores(q, keys), dim=-1)
    return torch.einsum("...n,...nv->...v", weights, values), weights


def aaba(q):
    scores = dot_scores(q, X_AABA)
    output, weights = dot_product_attention(q, X_AABA, X_AABA)
    return scores, weights, output, X_AABA.sum(dim=0) / X_AABA.shape[0]


def smallest_scale(p):
    # weight on B = e^s / (e^s + 3) = p  <=>  s = log 3 + log p - log(1 - p)
    return math.log(3.0) + math.log(p) - math.log1p(-p)


def linear_weights(scores):
    return scores * scores.sum(dim=-1, keepdim=True).reciprocal()


def linear_weights_failure():
    return torch.tensor([3.0, -3.0, 1.0], dtype=DTYPE)  # weights 3, -3, 1: negative, and above one


def self_attention(X, Wq, Wk, Wv):
    Q, K, V = (torch.einsum("...td,de->...te", X, W) for W in (Wq, Wk, Wv))
    A = torch.softmax(torch.einsum("...ie,...je->...ij", Q, K), dim=-1)
    return torch.einsum("...ij,...jv->...iv", A, V), A


def swap_x2_x3(x, weights):
    swapped = torch.tensor([0, 2, 1, 3])
    before = torch.einsum("n,nd->d", weights, x)
    return before, weights[swapped], torch.einsum("n,nd->d", weights[swapped], x[swapped])


def copy_query(keys, j):
    n = keys.shape[0]
    scores = torch.zeros(n, dtype=keys.dtype)
    scores[j] = math.log(99.0 * max(n - 1, 1)) + 2.0
    return keys.T @ torch.linalg.solve(keys @ keys.T, scores)


def average_query(keys, a, b):
    scale = math.log(400.0 * keys.shape[0])
    return scale * keys[a] + scale * keys[b]


def sample_keys(mu, sigmas, rng, num_samples=1):
    L = torch.linalg.cholesky(sigmas)  # (n, d, d)
    z = torch.randn(num_samples, mu.shape[0], 1, mu.shape[1], generator=rng, dtype=mu.dtype)
    return mu + (z @ L.transpose(-1, -2)).squeeze(-2)


def single_head_query(mu, a, b):
    return average_query(mu, a, b)


def attend_heads(queries, keys, values):
    outputs, weights = [], []
    for query in queries:
        output, weight = dot_product_attention(query, keys, values)
        outputs.append(output)
        weights.append(weight)
    return torch.stack(outputs).mean(dim=0), torch.stack(weights, dim=-2)


def spread(outputs, target):
    return torch.linalg.vector_norm(outputs - target, dim=-1).square().mean().sqrt().item()


def experiment(queries, mu, sigmas, values, a, b, num_samples, rng):
    outputs, weights = attend_heads(queries, sample_keys(mu, sigmas, rng, num_samples), values)
    return spread(outputs, 0.5 * (values[a] + values[b])), weights


def multihead_queries(mu, a, b):
    scale = math.log(400.0 * mu.shape[0])
    return scale * mu[a], scale * mu[b]


def kqv_design(u):
    u_a, u_b, u_c, u_d = u
    beta2 = torch.dot(u_b, u_b)
    K = torch.eye(u.shape[1], dtype=u.dtype)
    Q = (torch.outer(u_b, u_a) + torch.outer(u_c - u_d, u_d)) / beta2  # q2 = u_b; q1 = u_c - u_d: x3 over x1
    V = (torch.outer(u_b + u_c, u_d) + torch.outer(u_b - u_c, u_c)) / beta2  # v1 = u_b + u_c, v3 = u_b - u_c
    return K, Q, V


# the notebook's experiment cells, run again with the queries above (as they run after a student's definitions)
q_single = single_head_query(MU, A_INDEX, B_INDEX)[None]
spread_single_i, weights_single_i = experiment(q_single, MU, SIGMAS_I, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(1))
spread_single_ii, weights_single_ii = experiment(q_single, MU, SIGMAS_II, VALUES, A_INDEX, B_INDEX, N_SAMPLES,
                                                 make_rng(2))
q_multi = torch.stack(multihead_queries(MU, A_INDEX, B_INDEX))
spread_multi_i, weights_multi_i = experiment(q_multi, MU, SIGMAS_I, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(3))
spread_multi_ii, weights_multi_ii = experiment(q_multi, MU, SIGMAS_II, VALUES, A_INDEX, B_INDEX, N_SAMPLES, make_rng(4))

# autograder-hidden-canary-7d3e9a (never ships to students)
