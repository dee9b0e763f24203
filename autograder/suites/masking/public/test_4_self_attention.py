"""CausalSelfAttention: numerics with shared weights, gradients, causality, padding, dropout."""

import torch

from autograder.grading import assert_close, assert_tensor, forward_backward, graded, recognise
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
def test_causality(student, seed):
    """CausalSelfAttention: changing future tokens never changes earlier outputs"""
    state = common.attention_state(16, seed=41)
    common.assert_causal(common.attention(student, 16, 4, state), common.inputs(2, 8, 16, seed=41), seed)


@graded(points=2, covers=[*COVERS, "combined_mask", "padding_mask"])
def test_padding_is_ignored(student, seed):
    """CausalSelfAttention: the content of padded positions never changes real outputs"""
    state = common.attention_state(16, seed=51)
    module = common.attention(student, 16, 2, state)
    x = common.inputs(2, 6, 16, seed=51)
    lengths = torch.tensor([3, 6])
    base = module(x, lengths)
    changed = x.clone()
    changed[0, 3:] = 100 * torch.randn(3, 16, generator=common.generator(seed))
    out = module(changed, lengths)
    assert_tensor(out, "the output", shape=(2, 6, 16))
    assert_close(out[0, :3], base[0, :3], "the real outputs of a sequence after changing its padding "
                 "(they must not change: mask the padded keys)")


@graded(points=2, covers=COVERS)
def test_dropout(student, oracle, parts):
    """CausalSelfAttention: dropout is active in training and off in eval mode"""
    state = common.attention_state(16, seed=61)
    x = common.inputs(2, 6, 16, seed=61)
    reference_output = common.attention(student, 16, 4, state, dropout=0.0)(x)
    with parts("eval mode ignores dropout"):
        module = common.attention(student, 16, 4, state, dropout=0.5, train=False)
        student.seed(0)
        first, second = module(x), module(x)

        def seeded(impl):
            module = common.attention(impl, 16, 4, state, dropout=0.5, train=False)
            torch.manual_seed(0)
            return module(x)

        try:
            assert_close(first, second, "two eval-mode outputs for the same input")
            assert_close(first, reference_output, "the eval-mode output with dropout=0.5 (it must equal dropout=0)")
        except AssertionError:
            recognise(first, oracle(seeded))  # the same dropout masks as a known mistake's, if dropout stays on
            raise
    with parts("training mode applies dropout"):
        student.seed(0)
        module = common.attention(student, 16, 4, state, dropout=0.5, train=True)
        trained = module(x)
        assert_tensor(trained, "the training-mode output", shape=(2, 6, 16))
        assert not torch.allclose(trained, reference_output), (
            "with dropout=0.5 in training mode the output equals the no-dropout output: apply self.attn_dropout "
            "to the weights and self.resid_dropout to the output")
