"""Hidden tests: fresh shapes, dtypes and inputs from the secret seed, and the properties on them.

These never ship to students. Their inputs come from the ``seed`` fixture, which mixes in the term's secret, so
results cannot be memorised from the public tests.
"""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.positions import common

ROTARY = ["RotaryCausalSelfAttention", "apply_rope", "rope_frequencies", "CausalSelfAttention",
          "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads", "causal_mask",
          "combined_mask", "padding_mask"]
DTYPES = (torch.float32, torch.float64)


@graded(points=3, covers=["attention_ffn", "permute_check", "scaled_dot_product_attention", "masked_softmax"],
        builds_on=["masking"])
def test_equivariance_random(positions, oracle, parts, seed):
    """attention_ffn and permute_check on unseen sizes: equivariant without positions, not with them"""
    T, D, F, B = common.random_dims(seed, 4, 3, 12)
    x = common.vectors((B, T, D), seed, torch.float64)
    weights = common.ffn_weights(D, F, seed, torch.float64)
    perm, table = common.permutation(T, seed), common.vectors((T, D), seed + 1, torch.float64)
    label = f"T={T}, D={D}, F={F}, batch {B}"
    right = f"attention_ffn matches the reference, {label}"
    with parts(right):  # a wrong layer (x itself, say) is equivariant too: the properties count once Z is right
        got = positions.attention_ffn(x, weights)
        assert_close(got, oracle(lambda impl: impl.positions.attention_ffn(x, weights)), "the output")
    with parts(f"Z(PX) = P Z(X) without positions, {label}", requires=right):
        common.assert_equivariant(positions, x, perm, weights)
    with parts(f"not equivariant with positions, {label}", requires=right):
        common.assert_not_equivariant(positions, x, perm, weights, table)
    # Checked both ways round: (P X, P^-1) negates the differences of (X, P), so that a signed maximum taken for the
    # absolute one shows under any draw, not only where the largest difference happens to be negative.
    inverse = torch.argsort(perm)
    with parts(f"permute_check with and without positions, both ways round, {label}"):
        for extra in (None, table):
            for inputs, order in ((x, perm), (x[..., perm, :], inverse)):
                got = positions.permute_check(inputs, order, weights, extra)
                expected = oracle(lambda impl, extra=extra, inputs=inputs, order=order:
                                  impl.positions.permute_check(inputs, order, weights, extra))
                assert_close(got, expected, "permute_check " + ("with" if extra is not None else "without") +
                             " positions", rtol=1e-6, atol=1e-9)
    with parts(f"permute_check on one unbatched (T, D) sequence, {label}"):  # P X is x[..., perm, :] for any rank
        for extra in (None, table):
            got = positions.permute_check(x[0], perm, weights, extra)
            expected = oracle(lambda impl, extra=extra: impl.positions.permute_check(x[0], perm, weights, extra))
            assert_close(got, expected, "permute_check of a (T, D) input " + ("with" if extra is not None else
                         "without") + " positions", rtol=1e-6, atol=1e-9)


@graded(points=2, covers=["LearnedPositions"])
def test_learned_random(student, oracle, parts, seed):
    """LearnedPositions on unseen sizes: the table added up to block_size, an error past it"""
    block_size, d_model, extra = common.random_dims(seed, 3, 2, 20)
    for index, dtype in enumerate(DTYPES):
        weight = common.vectors((block_size, d_model), seed + index, dtype)
        T = block_size if index else max(1, block_size // 2)
        x = common.vectors((2, T, d_model), seed + 10 + index, dtype)

        def run(impl, weight=weight, x=x):
            return common.learned(impl, block_size, d_model, weight)(x)

        with parts(f"block_size={block_size}, T={T}, d_model={d_model}, {dtype}"):
            got = run(student)
            assert_tensor(got, "the output", shape=tuple(x.shape), dtype=dtype)
            assert_close(got, oracle(run), "the output")
    with parts(f"T={block_size + extra} > block_size={block_size} raises ValueError naming the limit"):
        module = common.learned(student, block_size, d_model, common.vectors((block_size, d_model), seed))
        common.assert_raises_value_error(
            lambda: module(common.vectors((1, block_size + extra, d_model), seed)),
            f"LearnedPositions(block_size={block_size}) on {block_size + extra} tokens",
            "the embedding cannot extrapolate past block_size", mention=str(block_size))


@graded(points=3, covers=["sinusoidal", "shift_operator"])
def test_sinusoidal_random(positions, oracle, parts, seed):
    """sinusoidal and shift_operator on unseen sizes and shifts, with Phi[t + k] = Phi[t] M_k"""
    for index, dtype in enumerate(DTYPES):
        T, half, k = common.random_dims(seed + index, 3, 1, 40)
        d, k = 2 * half, k - 20
        with parts(f"sinusoidal({T}, {d}), {dtype}"):
            got = positions.sinusoidal(T, d, dtype=dtype)
            assert_tensor(got, f"sinusoidal({T}, {d})", shape=(T, d), dtype=dtype)
            expected = oracle(lambda impl, T=T, d=d, dtype=dtype: impl.positions.sinusoidal(T, d, dtype=dtype))
            assert_close(got, expected, f"sinusoidal({T}, {d})")
        with parts(f"shift_operator({k}, {d}), {dtype}"):
            got = positions.shift_operator(k, d, dtype=dtype)
            expected = oracle(lambda impl, k=k, d=d, dtype=dtype: impl.positions.shift_operator(k, d, dtype=dtype))
            assert_close(got, expected, f"shift_operator({k}, {d})")
        with parts(f"Phi[t + {k}] = Phi[t] M_{k}, d={d}"):
            common.assert_shift_property(positions, T + abs(k) + 2, k, d)


@graded(points=3, covers=["apply_rope", "rope_frequencies"])
def test_rope_random(positions, oracle, parts, seed):
    """rope_frequencies and apply_rope on unseen shapes, bases and positions"""
    for index, dtype in enumerate(DTYPES):
        B, H, T, half = common.random_dims(seed + index, 4, 1, 9)
        head_dim, base = 2 * half, float(100 + seed % 20000)
        label = f"head_dim={head_dim}, base={base:g}, x ({B}, {H}, {T}, {head_dim}), {dtype}"
        with parts(f"rope_frequencies, {label}"):
            got = positions.rope_frequencies(head_dim, 3 * T, base, dtype=dtype)
            expected = oracle(lambda impl, a=(head_dim, 3 * T, base), dtype=dtype:
                              impl.positions.rope_frequencies(*a, dtype=dtype))
            assert_close(got, expected, "the angles")
        table = common.angle_table(head_dim, 3 * T, seed + index)
        x = common.vectors((B, H, T, head_dim), seed + index, dtype)
        where = common.positions_in((B, 1, T), 3 * T, seed + index)
        for label_positions, chosen in (("positions 0..T-1", None), ("random positions (B, 1, T)", where)):
            with parts(f"apply_rope, {label_positions}, {label}"):
                got = positions.apply_rope(x, table, chosen)
                assert_tensor(got, "the rotated x", shape=tuple(x.shape), dtype=dtype)
                expected = oracle(lambda impl, x=x, table=table, chosen=chosen:
                                  impl.positions.apply_rope(x, table, chosen))
                assert_close(got, expected, "the rotated x")


@graded(points=3, covers=["apply_rope"])
def test_rope_properties_random(positions, oracle, parts, seed):
    """apply_rope on unseen inputs: norms kept, identity at 0, relative scores, one-token decoding"""
    B, H, T, half = common.random_dims(seed, 4, 2, 10)
    table = common.angle_table(2 * half, 4 * T + 40, seed)
    x = common.vectors((B, H, T, 2 * half), seed + 1, torch.float64)
    shifts = tuple(common.random_dims(seed + 2, 2, 1, 3 * T + 30))
    right = "rotates x like the reference"
    with parts(right):  # rotating the halves keeps every property below: they count once the rotation is right
        assert_close(positions.apply_rope(x, table), oracle(lambda impl: impl.positions.apply_rope(x, table)),
                     "the rotated x")
    with parts("norms are preserved", requires=right):
        common.assert_norms_preserved(positions, x, table)
    with parts("all positions 0 is the identity", requires=right):
        common.assert_identity_at_zero(positions, x, table)
    with parts(f"(R_m q) . (R_n k) depends only on m - n (shifts {shifts})", requires=right):
        common.assert_relative(positions, x[0, 0, 0], x[1, 1, -1], table, shifts)
    with parts("decoding one token at position t equals row t of the full pass", requires=right):
        common.assert_decode_matches(positions, x, table, steps=tuple(sorted({0, T // 2, T - 1})))


@graded(points=4, covers=ROTARY, builds_on=["masking"])
def test_rotary_random(student, oracle, parts, seed):
    """RotaryCausalSelfAttention on unseen widths, heads, lengths and padded batches, and prefix decoding"""
    for index, dtype in enumerate(DTYPES):
        n_head, d_model, T, lengths = common.rotary_draw(seed + index, dtype)
        lengths = lengths if index else None
        state = common.attention_state(d_model, seed + index, dtype)
        x = common.inputs(3, T, d_model, seed + index, dtype)

        def run(impl, d_model=d_model, n_head=n_head, state=state, x=x, lengths=lengths):
            return common.rotary(impl, d_model, n_head, state)(x, lengths)

        label = f"d_model={d_model}, n_head={n_head}, T={T}, {dtype}" + (", padded" if index else "")
        with parts(label):
            common.assert_output_matches(run(student), oracle(run), x, lengths)
        with parts(f"decoding: row t of the full pass equals the last row of the pass over tokens 0..t, {label}"):
            module = common.rotary(student, d_model, n_head, state)
            full = module(x)
            for t in sorted({0, T // 2, T - 1}):
                assert_close(module(x[:, :t + 1])[:, -1], full[:, t],
                             f"the output at position {t} computed from tokens 0..{t} only, compared with row {t} of "
                             "the full pass (positions must count from 0 in both)")

# autograder-hidden-canary-7d3e9a (never ships to students)
