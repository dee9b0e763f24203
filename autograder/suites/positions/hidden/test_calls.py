"""Hidden tests of what one call leaves for the next: apply_rope leaves the caller's queries as they were, and a
RotaryCausalSelfAttention answers a second length, the dtype it was cast to and the device it was moved to.

The second device is ``meta`` (see the masking suite's ``test_calls``): its outputs have no values, so the device part
counts once the CPU calls are right.
"""

import torch

from autograder.grading import assert_close, graded
from autograder.suites.positions import common

COVERS = ["RotaryCausalSelfAttention", "apply_rope", "rope_frequencies", "CausalSelfAttention",
          "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads", "causal_mask"]
META = torch.device("meta")


@graded(points=1, covers=["apply_rope"])
def test_rope_leaves_queries_unchanged(positions, oracle, parts, seed):
    """apply_rope leaves the caller's queries, angles and positions as they were"""
    x = common.vectors((2, 3, 5, 8), seed)
    table = common.angle_table(8, 12, seed)
    where = common.positions_in((5,), 12, seed)
    right = "the rotated queries match the reference"
    with parts(right):  # a function that returns x unrotated changes nothing either: it counts once it is right
        assert_close(positions.apply_rope(x, table), oracle(lambda impl: impl.positions.apply_rope(x, table)),
                     "apply_rope(x, freqs)")
    with parts("the caller's tensors are unchanged", requires=right):
        _, after, _ = positions.apply_rope.with_inputs(x, table)
        common.assert_unchanged(after, {"x": x, "freqs": table}, "apply_rope")
        _, after, _ = positions.apply_rope.with_inputs(x, table, where)
        common.assert_unchanged(after, {"x": x, "freqs": table, "positions": where}, "apply_rope")


@graded(points=2, covers=COVERS, builds_on=["masking"])
def test_rotary_answers_every_call(student, oracle, parts, seed):
    """RotaryCausalSelfAttention: one module answers calls of other lengths, after .double() and after .to(device)"""
    state = common.attention_state(16, seed)
    module = common.rotary(student, 16, 2, state, max_positions=40)
    right = "calls of several lengths match the reference"
    with parts(right):
        for T in (4 + seed % 3, 11, 3):
            x = common.inputs(2, T, 16, seed + T)
            common.assert_output_matches(
                module(x), oracle(lambda impl, x=x: common.rotary(impl, 16, 2, state, max_positions=40)(x)), x)
    with parts("after .double(), a float64 call matches the reference", requires=right):
        double = {name: value.double() for name, value in state.items()}
        x = common.inputs(2, 30, 16, seed, torch.float64)
        module.double()
        common.assert_output_matches(
            module(x), oracle(lambda impl: common.rotary(impl, 16, 2, double, max_positions=40)(x)), x)
    with parts("after .to(device), calls run on that device", requires=right):
        module.to(META)
        x = common.inputs(2, 6, 16, seed, torch.float64)
        common.assert_on_meta(common.meta_call(module, x), "the output", tuple(x.shape))
        common.assert_on_meta(common.meta_call(module, x, torch.tensor([6, 2])), "the output with lengths",
                              tuple(x.shape))

# autograder-hidden-canary-7d3e9a (never ships to students)
