"""Inputs and the grader's own experiments for the attention suite. Every builder is deterministic in its seed.

The exploration questions are graded as experiments: a student function designs a query (or two) once,
through the proxy, and the Monte Carlo runs here, in the trusted parent, with the grader's own sampler and
attention. So a student's sampler cannot flatter their query, and one notebook grades in a few calls. The
grader samples the scores rather than the keys (``sample_scores``): cheaper, and not the notebook's solution.
Spreads are measured relative to half the distance between v_a and v_b: 0 means c always sits on the
midpoint, about 1 means c lands on v_a or v_b.
"""

from __future__ import annotations

import math

import torch

from autograder.grading import RemoteObject, StudentError

F64 = torch.float64
ALPHA = 1e-8  # the small isotropic key noise of both cases (the notebook's ALPHA)
CLOSE = 0.05  # largest relative spread that counts as "on the midpoint"
ROBUST = 0.4  # largest relative spread two heads may keep under the perturbed key norm (a single head: about 0.8)


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(int(seed) % 2**63)


def integers(seed: int, low: int, high: int, count: int) -> list[int]:
    """``count`` integers in [low, high), from ``seed``."""
    return [int(v) for v in torch.randint(low, high, (count,), generator=generator(seed))]


def config(seed: int) -> tuple[int, int, int, int]:
    """A random experiment layout: n keys (3 to 8) in d >= n dimensions, and two different keys a and b."""
    n = integers(seed, 3, 9, 1)[0]
    d = n + integers(seed + 1, 0, 5, 1)[0]
    a, b = torch.randperm(n, generator=generator(seed + 2))[:2].tolist()
    return n, d, a, b


def orthonormal(n: int, d: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    """(n, d) rows that are orthogonal with norm ``scale`` (n <= d)."""
    basis, _ = torch.linalg.qr(torch.randn(d, n, generator=generator(seed), dtype=F64))
    return scale * basis.T.contiguous()


def general_keys(n: int, d: int, seed: int) -> torch.Tensor:
    """(n, d) linearly independent keys of different lengths that share a direction.

    A longer key along the shared direction beats a shorter key on the shorter key's own dot product,
    so a query q = beta k_j does not copy the short keys.
    """
    g = generator(seed)
    direction = torch.nn.functional.normalize(torch.randn(d, generator=g, dtype=F64), dim=0)
    reach = 0.5 + 2.5 * torch.rand(n, generator=g, dtype=F64)
    return 0.3 * torch.randn(n, d, generator=g, dtype=F64) + reach[:, None] * direction


def dominated_key(keys: torch.Tensor) -> int:
    """The key whose own dot product is beaten by another key's by the most (where q = beta k_j fails worst)."""
    gram = keys @ keys.T
    others = gram - torch.diag(torch.full((keys.shape[0],), math.inf, dtype=keys.dtype))
    return int((others.max(dim=0).values - gram.diag()).argmax())


def spd(d: int, seed: int) -> torch.Tensor:
    """A random (d, d) covariance with eigenvalues between about 0.2 and 2, not diagonal."""
    g = generator(seed)
    rotation = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=F64))[0]
    eigenvalues = 0.2 + 1.8 * torch.rand(d, generator=g, dtype=F64)
    return rotation @ torch.diag(eigenvalues) @ rotation.T


def covariances(mu: torch.Tensor, alpha: float = ALPHA, perturbed: int | None = None) -> torch.Tensor:
    """(n, d, d): alpha I for every key, plus mu_a mu_a^T / 2 for key ``perturbed`` (case ii)."""
    n, d = mu.shape
    sigmas = alpha * torch.eye(d, dtype=mu.dtype).repeat(n, 1, 1)
    if perturbed is not None:
        sigmas[perturbed] += 0.5 * torch.outer(mu[perturbed], mu[perturbed])
    return sigmas


def sample_scores(queries: torch.Tensor, mu: torch.Tensor, sigmas: torch.Tensor, num_samples: int,
                  seed: int) -> torch.Tensor:
    """(num_samples, H, n) scores q_h . k_i of H queries against keys k_i ~ N(mu_i, sigmas_i), drawn directly.

    For one key the H scores are jointly Gaussian, with mean Q mu_i and covariance Q sigma_i Q^T; sampling
    them (not the keys) is all the attention needs, and a covariance square root from eigh allows equal queries.
    """
    means = mu @ queries.T  # (n, H)
    eigenvalues, eigenvectors = torch.linalg.eigh(queries @ sigmas @ queries.T)  # (n, H), (n, H, H)
    roots = eigenvectors * eigenvalues.clamp(min=0).sqrt().unsqueeze(-2)  # roots @ roots^T = Q sigma Q^T
    noise = torch.randn(num_samples, *means.shape, generator=generator(seed), dtype=mu.dtype)
    return (means + torch.einsum("nhk,snk->snh", roots, noise)).transpose(1, 2)


def rms(outputs: torch.Tensor, target: torch.Tensor) -> float:
    """Root-mean-square distance of (S, d_v) outputs from a (d_v,) target."""
    distances = torch.linalg.vector_norm(outputs - target, dim=-1)
    return float(distances.square().mean().sqrt())


def half_gap(values: torch.Tensor, a: int, b: int) -> float:
    return float((values[a] - values[b]).norm() / 2)


def measure(queries: torch.Tensor, mu: torch.Tensor, values: torch.Tensor, a: int, b: int, perturbed: bool,
            seed: int, num_samples: int = 10_000, alpha: float = ALPHA) -> dict:
    """The grader's Monte Carlo for (H, d) queries in case (i) or (ii).

    Returns ``spread`` (absolute), ``relative`` (over half the distance from v_a to v_b), the mean weight
    each head gives key a (``weight_a``, (H,)) and the fraction of samples whose c is closer to v_a than to
    v_b (``toward_a``).
    """
    sigmas = covariances(mu, alpha, a if perturbed else None)
    weights = torch.softmax(sample_scores(queries, mu, sigmas, num_samples, seed), dim=-1)  # (S, H, n)
    outputs = (weights @ values).mean(dim=1)  # each head's output, averaged over the heads
    spread = rms(outputs, (values[a] + values[b]) / 2)
    closer = (outputs - values[a]).norm(dim=-1) < (outputs - values[b]).norm(dim=-1)
    return {"spread": spread, "relative": spread / half_gap(values, a, b),
            "weight_a": weights[..., a].mean(dim=0), "toward_a": float(closer.double().mean())}


def kqv_outputs(u: torch.Tensor, K: torch.Tensor, Q: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """c1, c2, c3 (3, d) of part 6 for x1 = u_d + u_b, x2 = u_a, x3 = u_c + u_b, with column-vector K, Q, V."""
    u_a, u_b, u_c, u_d = u
    X = torch.stack([u_d + u_b, u_a, u_c + u_b])
    weights = torch.softmax((X @ Q.T) @ (X @ K.T).T, dim=-1)  # [i, j] = softmax_j (K x_j) . (Q x_i)
    return weights @ (X @ V.T)


# ---------------------------------------------------------------- reading what the student's notebook returns


def query(value, d: int, what: str) -> torch.Tensor:
    """A student's query as a float64 (d,) tensor, or a failure that says what is wrong."""
    if not isinstance(value, torch.Tensor):
        kind = value.remote_type if isinstance(value, RemoteObject) else type(value).__name__
        raise AssertionError(f"{what}: expected a torch.Tensor of shape ({d},), but your code returned a {kind}.")
    if tuple(value.shape) != (d,):
        raise AssertionError(f"{what}: shape {tuple(value.shape)}, expected ({d},).")
    if not value.is_floating_point() or not bool(torch.isfinite(value).all()):
        raise AssertionError(f"{what}: return finite floating-point values (got {value.dtype}, or NaN/inf).")
    return value.to(F64)


def number(value, what: str) -> float:
    """A student's scalar answer (a float, an int, or a one-element tensor) as a float."""
    if isinstance(value, torch.Tensor) and value.numel() == 1 and value.is_floating_point():
        return float(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    kind = value.remote_type if isinstance(value, RemoteObject) else type(value).__name__
    raise AssertionError(f"{what}: expected a number, but your code returned a {kind}.")


def notebook_value(attention, name: str, what: str):
    """A variable the notebook defines (an answer or a reported result), with clear failures."""
    try:
        value = getattr(attention, name).get()
    except StudentError as exc:
        if exc.error_type != "AttributeError":
            raise
        raise AssertionError(f"{what}: your notebook does not define `{name}`. The cell that sets it did not run "
                             "to the end (see the cells that raised errors, at the top of this report), or the "
                             "name was changed.") from None
    if isinstance(value, RemoteObject) and value.remote_type.endswith("ellipsis"):
        raise AssertionError(f"{what}: `{name}` is still `...`: replace the ... with your answer.")
    return value


def choice(attention, name: str, options: tuple, what: str):
    """A multiple-choice answer, checked to be one of ``options``."""
    value = notebook_value(attention, name, what)
    if isinstance(value, str):
        value = value.strip().lower()
    if value not in options:
        raise AssertionError(f"{what}: `{name}` is {value!r}; answer with one of {', '.join(map(repr, options))}.")
    return value
