"""Hidden tests: fresh inputs from the secret seed, edge cases, and batch equivariance.

These never ship to students. Their inputs come from the ``seed`` fixture, which mixes in the
term's secret, so results cannot be memorised from the public tests.
"""

import torch

from autograder.grading import assert_close, assert_rows_sum_to_one, assert_tensor, forward_backward, graded
from autograder.suites.masking import common

COVERS = ["CausalSelfAttention", "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads",
          "causal_mask", "combined_mask", "padding_mask"]


def _shape(seed: int, low: int = 2, high: int = 9) -> list[int]:
    g = common.generator(seed)
    return [int(torch.randint(low, high, (1,), generator=g)) for _ in range(4)]


@graded(points=3, covers=["masked_softmax"])
def test_masked_softmax_random(masking, oracle, parts, seed):
    """masked_softmax on unseen shapes, masks and magnitudes"""
    for index, (dtype, scale, keep) in enumerate([(torch.float32, 1.0, 0.5), (torch.float64, 50.0, 0.3),
                                                  (torch.float32, 3e4, 0.9), (torch.float64, 4.0, 0.05)]):
        shape = tuple(_shape(seed + index))
        scores = common.scores(shape, seed + index, dtype, scale)
        mask = common.key_mask(shape, seed + index, keep)
        with parts(f"{dtype}, shape {shape}, scale {scale:g}, {keep:.0%} of keys kept"):
            got = masking.masked_softmax(scores, mask)
            assert_tensor(got, "the weights", shape=shape, dtype=dtype)
            assert_close(got, oracle(lambda impl, s=scores, m=mask: impl.masking.masked_softmax(s, m)), "the weights")
            assert_rows_sum_to_one(got, keep_rows=mask.any(-1))


@graded(points=3, covers=["scaled_dot_product_attention", "masked_softmax"])
def test_sdpa_random(masking, oracle, parts, seed):
    """scaled_dot_product_attention on unseen batch shapes, lengths and widths"""
    for index, dtype in enumerate((torch.float32, torch.float64)):
        q, k, v, mask = common.sdpa_draw(seed + index, dtype)
        with parts(f"{dtype}, q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"):
            got = masking.scaled_dot_product_attention(q, k, v, mask)
            expected = oracle(lambda impl, q=q, k=k, v=v, m=mask: impl.masking.scaled_dot_product_attention(q, k, v, m))
            assert isinstance(got, tuple) and len(got) == 2, "return a tuple (output, weights)"
            assert_close(got[1], expected[1], "the weights")
            assert_close(got[0], expected[0], "the output")


@graded(points=4, covers=COVERS)
def test_self_attention_random(student, oracle, parts, seed):
    """CausalSelfAttention on unseen widths, head counts and padded batches"""
    configs = [(32, 8, None), (20, 5, "lengths"), (12, 12, None), (16, 2, "lengths with an empty sequence")]
    for index, (d_model, n_head, padding) in enumerate(configs):
        dtype = torch.float64 if index % 2 else torch.float32
        state = common.attention_state(d_model, seed + index, dtype)
        T = 3 + (seed + index) % 6
        x = common.inputs(3, T, d_model, seed + index, dtype)
        lengths = None
        if padding:
            lengths = torch.randint(1, T + 1, (3,), generator=common.generator(seed + index))
            lengths[-1] = 0 if "empty" in padding else T

        def run(impl, d_model=d_model, n_head=n_head, state=state, x=x, lengths=lengths):
            return common.attention(impl, d_model, n_head, state)(x, lengths)

        label = f"d_model={d_model}, n_head={n_head}, T={T}, {dtype}" + (f", {padding}" if padding else "")
        with parts(label):
            common.assert_output_matches(run(student), oracle(run), x, lengths)


@graded(points=3, covers=COVERS)
def test_self_attention_gradients_random(student, oracle, parts, seed):
    """CausalSelfAttention gradients (float64) with padding, on unseen inputs"""
    state = common.attention_state(20, seed, torch.float64)
    x = common.inputs(2, 7, 20, seed, torch.float64)
    lengths = torch.tensor([7, 1 + seed % 6])
    grad = torch.randn(2, 7, 20, generator=common.generator(seed + 3), dtype=torch.float64)
    grad[1, lengths[1]:] = 0  # a loss reads the real outputs only (the padded ones are unspecified)

    def run(impl):
        return forward_backward(common.attention(impl, 20, 4, state), x, lengths, grad_output=grad)

    common.assert_gradients_match(run(student), oracle(run), parts, state, each_parameter=False)


@graded(points=2, covers=COVERS)
def test_batch_equivariance(student, oracle, parts, seed):
    """CausalSelfAttention: permuting the batch permutes the outputs (sequences never mix)"""
    state = common.attention_state(16, seed)
    module = common.attention(student, 16, 4, state)
    x = common.inputs(5, 6, 16, seed)
    lengths = torch.tensor([6, 2, 5, 1, 4])
    order = torch.randperm(5, generator=common.generator(seed))
    base = module(x, lengths)
    right = "the output with lengths matches the reference"
    with parts(right):  # a module that ignores the batch axis is equivariant too: it counts once the output is right
        common.assert_output_matches(base, oracle(lambda impl: common.attention(impl, 16, 4, state)(x, lengths)), x,
                                     lengths)
    with parts("permuting the batch permutes the outputs", requires=right):
        permuted = module(x[order], lengths[order])
        assert_tensor(permuted, "the output", shape=(5, 6, 16))
        real = lengths[order]
        assert_close(common.at_real_positions(permuted, real), common.at_real_positions(base[order], real),
                     "the real outputs of a permuted batch (they must be the permuted outputs: each sequence attends "
                     "only within itself)")


@graded(points=1, covers=["causal_mask", "padding_mask", "combined_mask"])
def test_mask_edge_cases(masking, oracle, parts, seed):
    """Masks at the edges: length 0, length T, T = 1, large T"""
    T = 30 + seed % 20
    with parts(f"causal_mask({T})"):
        assert_close(masking.causal_mask(T), oracle(lambda impl: impl.masking.causal_mask(T)), f"causal_mask({T})")
    lengths = torch.tensor([0, T, 1, T // 2])
    with parts("padding_mask with lengths 0 and T"):
        assert_close(masking.padding_mask(lengths, T), oracle(lambda impl: impl.masking.padding_mask(lengths, T)),
                     "padding_mask")
    with parts("combined_mask with lengths 0 and T"):
        assert_close(masking.combined_mask(lengths, T), oracle(lambda impl: impl.masking.combined_mask(lengths, T)),
                     "combined_mask")

# autograder-hidden-canary-7d3e9a (never ships to students)
