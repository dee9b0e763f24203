"""RotaryCausalSelfAttention: your masking attention with RoPE on the queries and keys of every head."""

import torch

from autograder.grading import forward_backward, graded
from autograder.suites.positions import common

COVERS = ["RotaryCausalSelfAttention", "apply_rope", "rope_frequencies", "CausalSelfAttention",
          "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads", "causal_mask"]


@graded(points=4, covers=COVERS, builds_on=["masking"])
def test_rotary_matches_reference(student, oracle, parts):
    """RotaryCausalSelfAttention: output matches the reference with the same weights (eval mode)"""
    for d_model, n_head, T, dtype in [(16, 4, 6, torch.float32), (16, 2, 24, torch.float64),
                                      (8, 1, 5, torch.float32)]:
        state = common.attention_state(d_model, seed=500 + d_model + T, dtype=dtype)
        x = common.inputs(2, T, d_model, seed=500 + d_model + T, dtype=dtype)

        def run(impl, d_model=d_model, n_head=n_head, state=state, x=x):
            return common.rotary(impl, d_model, n_head, state)(x)

        with parts(f"d_model={d_model}, n_head={n_head}, T={T}, {dtype}"):
            common.assert_output_matches(run(student), oracle(run), x)


@graded(points=1, covers=[*COVERS, "combined_mask", "padding_mask"], builds_on=["masking"])
def test_rotary_with_padding(student, oracle):
    """RotaryCausalSelfAttention: output with `lengths` matches the reference, at another base and table size"""
    state = common.attention_state(16, seed=510)
    x = common.inputs(3, 5, 16, seed=510)
    lengths = torch.tensor([5, 2, 4])

    def run(impl):
        return common.rotary(impl, 16, 2, state, max_positions=8, base=100.0)(x, lengths)

    common.assert_output_matches(run(student), oracle(run), x, lengths)


@graded(points=2, covers=COVERS, builds_on=["masking"])
def test_rotary_gradients(student, oracle, parts):
    """RotaryCausalSelfAttention: gradients for the input and every parameter match the reference"""
    state = common.attention_state(12, seed=520, dtype=torch.float64)
    x = common.inputs(2, 5, 12, seed=520, dtype=torch.float64)
    grad = common.vectors((2, 5, 12), seed=521, dtype=torch.float64)

    def run(impl):
        return forward_backward(common.rotary(impl, 12, 3, state), x, grad_output=grad)

    common.assert_gradients_match(run(student), oracle(run), parts, state)


@graded(points=2, covers=COVERS, builds_on=["masking"])
def test_values_are_not_rotated(student, parts):
    """RotaryCausalSelfAttention: only queries and keys are rotated (equal scores give your masking's output)"""
    state = common.attention_state(16, seed=530)
    for name in ("query.weight", "query.bias"):  # all scores equal: each row averages the values it may see
        state[name] = torch.zeros_like(state[name])
    x = common.inputs(2, 7, 16, seed=530)
    with parts("zero queries"):
        common.assert_values_unrotated(student, state, x, n_head=4)


@graded(points=1, covers=COVERS, builds_on=["masking"])
def test_rotary_causality_and_state(student, oracle, parts):
    """RotaryCausalSelfAttention: causal, and the same state dict as CausalSelfAttention (table not saved)"""
    state = common.attention_state(16, seed=540)
    module = common.rotary(student, 16, 4, state)
    x = common.inputs(2, 8, 16, seed=540)
    right = "the output matches the reference"
    with parts(right):  # a wrong module can be causal too: causality counts once the output is right
        common.assert_output_matches(module(x), oracle(lambda impl: common.rotary(impl, 16, 4, state)(x)), x)
    with parts("changing future tokens never changes earlier outputs", requires=right):
        common.assert_causal(module, x, seed=541)
    with parts("state_dict keys"):
        keys = sorted(module.state_dict().keys())
        assert keys == sorted(state), (f"the state dict holds {keys}; it should hold exactly the parameters of "
                                       f"CausalSelfAttention ({sorted(state)}): register the frequency table with "
                                       "register_buffer(..., persistent=False)")


@graded(points=1, covers=COVERS, builds_on=["masking"])
def test_rotary_dropout(student, oracle, parts):
    """RotaryCausalSelfAttention: dropout is off in eval mode, and in training acts on the weights and on the output"""
    state = common.attention_state(16, seed=530)
    common.assert_dropout(student, oracle, parts, lambda impl, **mode: common.rotary(impl, 16, 4, state, **mode),
                          common.inputs(2, 6, 16, seed=530))
