"""CausalSelfAttention: numerics with shared weights, gradients, causality, padding, dropout."""

import torch

from autograder.grading import assert_close, assert_tensor, forward_backward, graded
from autograder.suites.masking import common

COVERS = ["CausalSelfAttention", "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads",
          "causal_mask"]


@graded(points=4, covers=COVERS)
def test_forward_matches_reference(student, oracle, parts):
    """CausalSelfAttention: output matches the reference with the same weights (eval mode)"""
    for d_model, n_head, dtype in [(16, 4, torch.float32), (24, 3, torch.float64), (8, 1, torch.float32)]:
        state = common.attention_state(d_model, seed=d_model, dtype=dtype)
        x = common.inputs(2, 6, d_model, seed=d_model, dtype=dtype)

        def run(impl, d_model=d_model, n_head=n_head, state=state, x=x):
            return common.attention(impl, d_model, n_head, state)(x)

        with parts(f"d_model={d_model}, n_head={n_head}, {dtype}"):
            common.assert_output_matches(run(student), oracle(run), x)


@graded(points=2, covers=[*COVERS, "combined_mask", "padding_mask"])
def test_forward_with_padding_matches_reference(student, oracle):
    """CausalSelfAttention: output with `lengths` matches the reference"""
    state = common.attention_state(16, seed=21)
    x = common.inputs(3, 5, 16, seed=21)
    lengths = torch.tensor([5, 2, 4])

    def run(impl):
        return common.attention(impl, 16, 4, state)(x, lengths)

    common.assert_output_matches(run(student), oracle(run), x, lengths)


@graded(points=3, covers=COVERS)
def test_gradients_match_reference(student, oracle, parts):
    """CausalSelfAttention: gradients for the input and every parameter match the reference"""
    state = common.attention_state(12, seed=31, dtype=torch.float64)
    x = common.inputs(2, 5, 12, seed=31, dtype=torch.float64)
    grad = torch.randn(2, 5, 12, generator=common.generator(32), dtype=torch.float64)

    def run(impl):
        return forward_backward(common.attention(impl, 12, 3, state), x, grad_output=grad)

    common.assert_gradients_match(run(student), oracle(run), parts, state)


@graded(points=2, covers=COVERS)
def test_causality(student, oracle, parts, seed):
    """CausalSelfAttention: changing future tokens never changes earlier outputs"""
    state = common.attention_state(16, seed=41)
    x = common.inputs(2, 8, 16, seed=41)
    module = common.attention(student, 16, 4, state)
    right = "the output matches the reference"
    with parts(right):  # a wrong module can be causal too (one that ignores the keys): it counts once it is right
        common.assert_output_matches(module(x), oracle(lambda impl: common.attention(impl, 16, 4, state)(x)), x)
    with parts("changing future tokens never changes earlier outputs", requires=right):
        common.assert_causal(module, x, seed)


@graded(points=2, covers=[*COVERS, "combined_mask", "padding_mask"])
def test_padding_is_ignored(student, oracle, parts, seed):
    """CausalSelfAttention: the content of padded positions never changes real outputs"""
    state = common.attention_state(16, seed=51)
    module = common.attention(student, 16, 2, state)
    x = common.inputs(2, 6, 16, seed=51)
    lengths = torch.tensor([3, 6])
    right = "the output with lengths matches the reference"
    with parts(right):  # a module that ignores every key ignores the pads too: it counts once the output is right
        common.assert_output_matches(module(x, lengths),
                                     oracle(lambda impl: common.attention(impl, 16, 2, state)(x, lengths)), x, lengths)
    with parts("changing the padding never changes real outputs", requires=right):
        base = module(x, lengths)
        changed = x.clone()
        changed[0, 3:] = 100 * torch.randn(3, 16, generator=common.generator(seed))
        out = module(changed, lengths)
        assert_tensor(out, "the output", shape=(2, 6, 16))
        assert_close(out[0, :3], base[0, :3], "the real outputs of a sequence after changing its padding "
                     "(they must not change: mask the padded keys)")


@graded(points=2, covers=COVERS)
def test_dropout(student, oracle, parts):
    """CausalSelfAttention: dropout is off in eval mode, and in training acts on the weights and on the output"""
    state = common.attention_state(16, seed=61)
    common.assert_dropout(student, oracle, parts,
                          lambda impl, **mode: common.attention(impl, 16, 4, state, **mode),
                          common.inputs(2, 6, 16, seed=61))
