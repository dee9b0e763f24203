"""What a student's design must do, measured in the grader: shared by the public and the hidden tests.

Each check calls the student's function once (or a few times) through the proxy, measures the result
with the grader's own attention and Monte Carlo (``common``), and fails with a message that says what
was measured and, where the numbers point to a typical mistake, which one. Statistical tolerances are
at least five standard errors of the grader's or the student's estimate, so a correct design never
fails by chance, whatever the term's secret seed.
"""

from __future__ import annotations

import torch

from autograder.grading import assert_tensor
from autograder.suites.attention import common

F64 = common.F64
COPY_WEIGHT = 0.99
AVERAGE_DISTANCE = 0.02  # of the largest value's norm
VALUE_DRAWS = 200
KQV_ERROR = 0.05  # of the norm of the u's
REPORT_TOLERANCE = 0.05  # of half the distance between v_a and v_b


# ---------------------------------------------------------------- parts 2 and 3: copying and averaging


def check_copy(attention, keys: torch.Tensor, j: int, label: str) -> None:
    """copy_query(keys, j) puts weight at least COPY_WEIGHT on key j."""
    q = common.query(attention.copy_query(keys, j), keys.shape[1], f"copy_query(keys, {j})")
    weights = torch.softmax(keys @ q, dim=0)
    if weights[j] >= COPY_WEIGHT:
        return
    message = (f"{label}: your query puts weight {float(weights[j]):.4f} on key {j} (at least {COPY_WEIGHT} needed); "
               f"the largest weight, {float(weights.max()):.4f}, is on key {int(weights.argmax())}.")
    scores = keys @ q
    lead = float(scores[j] - torch.cat([scores[:j], scores[j + 1:]]).max())
    along = torch.nn.functional.cosine_similarity(q, keys[j], dim=0) > 0.999
    if lead <= 0 and along:
        message += (" Your query points along key j (q = beta k_j): that copies orthonormal keys, but here another "
                    "key is longer in the same direction and so scores at least as high against k_j as k_j itself. "
                    "Choose the scores you want and solve keys @ q = scores instead.")
    elif lead > 0:
        needed = float(torch.log(torch.tensor(COPY_WEIGHT / (1 - COPY_WEIGHT) * (len(keys) - 1))))
        message += (f" Key j does win, but not by enough: its score leads every other by {lead:.2f}, and since the "
                    f"other {len(keys) - 1} keys share the rest of the weight, the lead must be at least "
                    f"log({COPY_WEIGHT / (1 - COPY_WEIGHT):.0f} (n - 1)) = {needed:.2f}: scale your query up.")
    raise AssertionError(message)


def check_average(attention, keys: torch.Tensor, a: int, b: int, seed: int, label: str) -> None:
    """average_query(keys, a, b) keeps c within AVERAGE_DISTANCE of (v_a + v_b) / 2 for random values."""
    n, d = keys.shape
    q = common.query(attention.average_query(keys, a, b), d, f"average_query(keys, {a}, {b})")
    weights = torch.softmax(keys @ q, dim=0)
    values = torch.randn(VALUE_DRAWS, n, 5, generator=common.generator(seed), dtype=F64)
    outputs = torch.einsum("n,snv->sv", weights, values)
    distance = (outputs - (values[:, a] + values[:, b]) / 2).norm(dim=-1) / values.norm(dim=-1).amax(dim=-1)
    if distance.max() <= AVERAGE_DISTANCE:
        return
    others = 1 - float(weights[a] + weights[b])
    message = (f"{label}: over {VALUE_DRAWS} random value sets, c lands up to {float(distance.max()):.3f} of the "
               f"largest value's norm away from (v_a + v_b) / 2 (at most {AVERAGE_DISTANCE} allowed). Your weights: "
               f"{float(weights[a]):.4f} on a, {float(weights[b]):.4f} on b, {others:.4f} on the other keys together.")
    if abs(float(weights[a] - weights[b])) > 0.01:
        message += " Keys a and b must get the same weight: give them the same score."
    if others > 0.01:
        message += " Too much weight stays on the other keys: the scores of a and b must be larger."
    raise AssertionError(message)


# ---------------------------------------------------------------- part 4: sampling keys


def check_key_statistics(keys: torch.Tensor, mu: torch.Tensor, sigmas: torch.Tensor) -> None:
    """(S, n, d) samples have the means, covariances and independence of N(mu_i, sigmas_i)."""
    S, n, d = keys.shape
    keys = keys.to(F64)
    variances = torch.diagonal(sigmas, dim1=-2, dim2=-1)  # (n, d)
    error = (keys.mean(dim=0) - mu).abs()
    allowed = 5 * (variances / S).sqrt()
    if (error > allowed).any():
        i = int((error / allowed).amax(dim=1).argmax())
        raise AssertionError(f"key {i}: the sample mean is off by {float(error[i].max()):.3g} (at most "
                             f"{float(allowed[i].max()):.3g} expected from {S} samples): add mu[{i}] to its noise.")
    centered = keys - keys.mean(dim=0)
    for i in range(n):
        sample = centered[:, i].T @ centered[:, i] / (S - 1)
        allowed = 6 * ((variances[i][:, None] * variances[i][None, :] + sigmas[i] ** 2) / S).sqrt()
        if ((sample - sigmas[i]).abs() <= allowed).all():
            continue
        factor = torch.linalg.cholesky(sigmas[i])
        message = (f"key {i}: the sample covariance differs from sigmas[{i}] by up to "
                   f"{float((sample - sigmas[i]).abs().max()):.3g} (at most {float(allowed.max()):.3g} expected from "
                   f"{S} samples).")
        if torch.allclose(sample, sigmas[i] @ sigmas[i], atol=float(4 * allowed.max())):
            message += (" It matches sigma @ sigma: the noise is multiplied by the covariance itself. Use a factor L "
                        "with L L^T = sigma (torch.linalg.cholesky).")
        elif torch.allclose(sample, factor.T @ factor, atol=float(4 * allowed.max())):
            message += (" It matches L^T L instead of L L^T: the Cholesky factor is applied transposed (for row "
                        "vectors z, use z @ L.T).")
        raise AssertionError(message)
    for i in range(n):
        for j in range(i + 1, n):
            cross = centered[:, i].T @ centered[:, j] / (S - 1)
            allowed = 6 * (variances[i][:, None] * variances[j][None, :] / S).sqrt()
            if (cross.abs() > allowed).any():
                raise AssertionError(f"keys {i} and {j} are correlated (cross-covariance up to "
                                     f"{float(cross.abs().max()):.3g}): draw independent noise for every key.")


def check_generator_is_used(student, attention, mu: torch.Tensor, sigmas: torch.Tensor) -> None:
    """The same generator seed gives the same keys whatever torch's global seed; another seed gives others."""
    student.seed(0)
    first = attention.sample_keys(mu, sigmas, attention.make_rng(5), 6)
    student.seed(1)
    again = attention.sample_keys(mu, sigmas, attention.make_rng(5), 6)
    other = attention.sample_keys(mu, sigmas, attention.make_rng(6), 6)
    for value in (first, again, other):
        assert_tensor(value, "sample_keys(mu, sigmas, rng, 6)", shape=(6, *mu.shape))
    assert torch.equal(first, again), (
        "two generators with the same seed gave different keys: draw every random number from rng "
        "(torch.randn(..., generator=rng)), never from torch's global generator")
    assert not torch.equal(first, other), "generators with different seeds gave the same keys: draw from rng"


# ---------------------------------------------------------------- parts 4 and 5: experiments with the student's queries


def setup(n: int, d: int, a: int, b: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Orthonormal key means (n, d) and orthogonal values of norm 3 (n, n), as in the notebook."""
    return common.orthonormal(n, d, seed), common.orthonormal(n, n, seed + 1, scale=3.0)


def describe(measured: dict, a: int) -> str:
    weights = ", ".join(f"{float(w):.3f}" for w in measured["weight_a"])
    return (f"relative spread {measured['relative']:.3f}; mean weight on key a per head: {weights}; "
            f"c is closer to v_a than to v_b in {measured['toward_a']:.0%} of the samples")


def check_single_head(attention, n: int, d: int, a: int, b: int, seed: int) -> None:
    """single_head_query keeps c on the midpoint in case (i)."""
    mu, values = setup(n, d, a, b, seed)
    q = common.query(attention.single_head_query(mu, a, b), d, f"single_head_query(mu, {a}, {b})")
    measured = common.measure(q[None], mu, values, a, b, perturbed=False, seed=seed + 2)
    assert measured["relative"] <= common.CLOSE, (
        f"case (i), n = {n}, d = {d}, a = {a}, b = {b}: c strays from (v_a + v_b) / 2 ({describe(measured, a)}; at "
        f"most {common.CLOSE} allowed, relative to half the distance from v_a to v_b). Give keys a and b the same "
        "large score at their means; a huge scale also magnifies the small key noise.")


def check_multi_head(attention, parts, n: int, d: int, a: int, b: int, seed: int) -> None:
    """multihead_queries: two different queries, c on the midpoint in case (i) and near it in case (ii)."""
    mu, values = setup(n, d, a, b, seed)
    label = f"n = {n}, d = {d}, a = {a}, b = {b}"
    queries = None
    with parts(f"{label}: two different queries of shape (d,)"):
        got = attention.multihead_queries(mu, a, b)
        assert isinstance(got, tuple | list) and len(got) == 2, "return a tuple (q1, q2)"
        queries = torch.stack([common.query(q, d, f"q{i + 1}") for i, q in enumerate(got)])
        assert (queries[0] - queries[1]).norm() > 1e-6 * queries.norm(), (
            "your two queries are the same, so both heads attend alike and fail together: that is single-head "
            "attention again. Give each head its own, simpler job.")
    if queries is None:
        return
    for perturbed, limit, case in ((False, common.CLOSE, "(i)"), (True, common.ROBUST, "(ii)")):
        with parts(f"{label}: case {case}", weight=2.0 if perturbed else 1.0):
            measured = common.measure(queries, mu, values, a, b, perturbed=perturbed, seed=seed + 3)
            assert measured["relative"] <= limit, (
                f"case {case}: c = (c1 + c2) / 2 strays from (v_a + v_b) / 2 ({describe(measured, a)}; at most {limit} "
                "allowed). " + ("Each head should copy one of the two values." if not perturbed else
                                "Your heads still depend on how long key a is: let one head copy v_a alone and the "
                                "other v_b alone, so the length of k_a cannot tip the balance between a and b."))


def check_experiment(attention, queries: torch.Tensor, n: int, d: int, a: int, b: int, perturbed: bool,
                     num_samples: int, seed: int, parts) -> None:
    """experiment(...) returns one weight row per sample, and a spread that matches the grader's Monte Carlo."""
    mu, values = setup(n, d, a, b, seed)
    sigmas = common.covariances(mu, perturbed=a if perturbed else None)
    H = queries.shape[0]
    result = None
    with parts(f"{H} head(s), case {'(ii)' if perturbed else '(i)'}: returns (spread, weights of every sample)"):
        got = attention.experiment(queries, mu, sigmas, values, a, b, num_samples, attention.make_rng(seed))
        assert isinstance(got, tuple | list) and len(got) == 2, "return a tuple (spread, weights)"
        spread = common.number(got[0], "the spread")
        assert_tensor(got[1], "the weights")
        assert tuple(got[1].shape) == (num_samples, H, n), (
            f"the weights have shape {tuple(got[1].shape)}, expected ({num_samples}, {H}, {n}): one row per head for "
            f"each of the num_samples = {num_samples} samples. Use every sample you are asked for: a Monte Carlo "
            "estimate from fewer samples is noisier than the grader allows.")
        result = spread, got[1].to(F64)
    if result is None:
        return
    spread, weights = result
    measured = common.measure(queries, mu, values, a, b, perturbed=perturbed, seed=seed + 1)
    gap = common.half_gap(values, a, b)
    with parts(f"{H} head(s), case {'(ii)' if perturbed else '(i)'}: agrees with the grader's Monte Carlo"):
        assert abs(spread - measured["spread"]) <= REPORT_TOLERANCE * gap, (
            f"your experiment's spread is {spread:.4f}; the grader measures {measured['spread']:.4f} for the same "
            "queries and key distributions. The spread is the root-mean-square distance of c from "
            "(values[a] + values[b]) / 2 over the sampled key sets.")
        mean_a = weights[..., a].mean(dim=0)
        assert torch.allclose(mean_a, measured["weight_a"], atol=0.06), (
            f"your weights put {mean_a.tolist()} on key a on average (per head); the grader measures "
            f"{measured['weight_a'].tolist()}: sample the keys from the given covariances and take each head's "
            "softmax over the keys.")


def check_report(attention, oracle, parts, names: tuple[str, str], query_of, seed: int) -> None:
    """The spreads a notebook reports for cases (i) and (ii) match the grader's measurement on the same setup."""
    setup_value = oracle(lambda impl: tuple(getattr(impl.attention, name) for name in
                                            ("MU", "VALUES", "A_INDEX", "B_INDEX", "ALPHA"))).value
    mu, values, a, b, alpha = setup_value
    queries = query_of(mu, a, b)
    gap = common.half_gap(values, a, b)
    for name, perturbed in zip(names, (False, True), strict=True):
        with parts(f"`{name}`"):
            reported = common.number(common.notebook_value(attention, name, name), f"`{name}`")
            measured = common.measure(queries, mu, values, a, b, perturbed=perturbed, seed=seed, alpha=alpha)
            assert abs(reported - measured["spread"]) <= REPORT_TOLERANCE * gap, (
                f"your notebook reports {name} = {reported:.4f}; with your queries the grader measures "
                f"{measured['spread']:.4f} (tolerance {REPORT_TOLERANCE * gap:.3f}). Run the experiment cell again "
                f"after changing your functions, keep the given setup, and use all N_SAMPLES samples.")


# ---------------------------------------------------------------- part 6: key-query-value design


def check_kqv(attention, u: torch.Tensor, label: str) -> None:
    """kqv_design(u) gives c2 within KQV_ERROR of u_b and c1 within KQV_ERROR of u_b - u_c (relative to |u|)."""
    d = u.shape[1]
    got = attention.kqv_design(u)
    assert isinstance(got, tuple | list) and len(got) == 3, "return a tuple (K, Q, V)"
    for name, matrix in zip("KQV", got, strict=True):
        assert_tensor(matrix, name, shape=(d, d))
        assert bool(torch.isfinite(matrix).all()), f"{name} has NaN or infinite entries"
    K, Q, V = (m.to(F64) for m in got)
    c = common.kqv_outputs(u, K, Q, V)
    norm = float(u[0].norm())
    u_a, u_b, u_c, u_d = u
    errors = {"c2 ~ u_b": float((c[1] - u_b).norm()) / norm, "c1 ~ u_b - u_c": float((c[0] - u_b + u_c).norm()) / norm}
    wrong = {what: error for what, error in errors.items() if not error <= KQV_ERROR}
    if not wrong:
        return
    message = f"{label}: " + "; ".join(f"{what} is off by {error:.2f} of |u|" for what, error in wrong.items())
    message += f" (at most {KQV_ERROR} allowed)."
    if "c2 ~ u_b" in wrong and float((c[1] - (u_b + (u_c + u_d) / 2)).norm()) / norm < KQV_ERROR:
        message += (" c2 is the average of the values of x1 and x3 with V = I: query 2 picks the right tokens, but "
                    "their values must average to u_b, so V has to change u_c and u_d.")
    elif "c1 ~ u_b - u_c" in wrong and float((c[0] - u_b - u_c).norm()) / norm < KQV_ERROR:
        message += " c1 is u_b + u_c: the value of x3 must flip the sign of its u_c part."
    elif any(error > 2 for error in wrong.values()):
        message += (" The outputs are far longer than the u's: divide the outer products by |u|^2 "
                    f"(= {norm ** 2:.4g} here) so that V maps u's to u's.")
    else:
        message += (" Decide which token each query must attend to (x2: x1 and x3 equally; x1: x3 only), then which "
                    "value each token must carry.")
    raise AssertionError(message)


def kqv_vectors(d: int, norm: float, seed: int) -> torch.Tensor:
    """(4, d) orthogonal rows u_a, u_b, u_c, u_d, all of length ``norm``."""
    return common.orthonormal(4, d, seed, scale=norm)

