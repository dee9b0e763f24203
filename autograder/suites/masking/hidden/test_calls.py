"""Hidden tests of what one call leaves for the next: the caller's tensors unchanged, a module that answers a second
length, a dtype it was cast to and a device it was moved to, and tensors made on the inputs' device.

The second device is ``meta`` (a device type on every machine, whose tensors carry a shape and no values): a mask
made on the default device, or kept from an earlier call, cannot meet a meta tensor without an error. Its outputs
have no values, so each device part counts once the same call on the CPU is right.
"""

import torch

from autograder.grading import assert_close, graded
from autograder.suites.masking import common

COVERS = ["CausalSelfAttention", "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads",
          "causal_mask", "combined_mask", "padding_mask"]
META = torch.device("meta")


@graded(points=1, covers=["masked_softmax", "scaled_dot_product_attention"])
def test_inputs_left_unchanged(masking, oracle, parts, seed):
    """masked_softmax and scaled_dot_product_attention leave the caller's tensors as they were"""
    shape = (2, 3, 5, 6)
    scores, mask = common.scores(shape, seed), common.key_mask(shape, seed)
    q, k, v, sdpa_mask = common.sdpa_draw(seed, torch.float32)
    right = "the outputs match the reference"
    with parts(right):  # a function that returns zeros changes nothing either: it counts once the outputs are right
        got = masking.masked_softmax(scores, mask)
        assert_close(got, oracle(lambda impl: impl.masking.masked_softmax(scores, mask)), "the weights")
        out, _ = masking.scaled_dot_product_attention(q, k, v, sdpa_mask)
        assert_close(out, oracle(lambda impl: impl.masking.scaled_dot_product_attention(q, k, v, sdpa_mask)[0]),
                     "the output of scaled_dot_product_attention")
    with parts("the caller's tensors are unchanged", requires=right):
        _, after, _ = masking.masked_softmax.with_inputs(scores, mask)
        common.assert_unchanged(after, {"scores": scores, "mask": mask}, "masked_softmax")
        _, after, _ = masking.scaled_dot_product_attention.with_inputs(q, k, v, sdpa_mask)
        common.assert_unchanged(after, {"q": q, "k": k, "v": v, "mask": sdpa_mask}, "scaled_dot_product_attention")


@graded(points=2, covers=COVERS)
def test_module_answers_every_call(student, oracle, parts, seed):
    """CausalSelfAttention: one module answers calls of other lengths, after .double() and after .to(device)"""
    state = common.attention_state(16, seed)
    module = common.attention(student, 16, 4, state)
    lengths_seen = (4 + seed % 3, 9, 3)
    right = "calls of several lengths match the reference"
    with parts(right):
        for T in lengths_seen:
            x = common.inputs(2, T, 16, seed + T)
            common.assert_output_matches(module(x), oracle(lambda impl, x=x: common.attention(impl, 16, 4, state)(x)),
                                         x)
    with parts("after .double(), a float64 call matches the reference", requires=right):
        double = {name: value.double() for name, value in state.items()}
        x = common.inputs(2, 7, 16, seed, torch.float64)
        module.double()
        common.assert_output_matches(module(x), oracle(lambda impl: common.attention(impl, 16, 4, double)(x)), x)
    with parts("after .to(device), calls run on that device", requires=right):
        module.to(META)
        x = common.inputs(2, 5, 16, seed, torch.float64)
        common.assert_on_meta(common.meta_call(module, x), "the output", tuple(x.shape))
        common.assert_on_meta(common.meta_call(module, x, torch.tensor([5, 2])), "the output with lengths",
                              tuple(x.shape))


@graded(points=1, covers=["causal_mask", "padding_mask", "combined_mask", "masked_softmax",
                          "scaled_dot_product_attention"])
def test_tensors_made_on_the_inputs_device(masking, oracle, parts, seed):
    """Masks, weights and outputs are made on the device asked for, or the inputs' device"""
    T = 3 + seed % 5
    lengths = torch.tensor([T, 1, 0])
    right = "the masks match the reference on the CPU"
    with parts(right):
        assert_close(masking.causal_mask(T), oracle(lambda impl: impl.masking.causal_mask(T)), f"causal_mask({T})")
        assert_close(masking.combined_mask(lengths, T), oracle(lambda impl: impl.masking.combined_mask(lengths, T)),
                     "combined_mask")
    with parts("masks on the device asked for, or the lengths' device", requires=right):
        common.assert_on_meta(masking.causal_mask(T, device=META), f"causal_mask({T}, device)", (T, T))
        common.assert_on_meta(common.meta_call(masking.padding_mask, lengths, T), "padding_mask", (3, T))
        common.assert_on_meta(common.meta_call(masking.combined_mask, lengths, T), "combined_mask", (3, 1, T, T))
    shape = (2, 4, 5)
    scores, mask = common.scores(shape, seed), common.key_mask(shape, seed)
    q, k, v, sdpa_mask = common.sdpa_draw(seed, torch.float32)
    attention = "masked_softmax and scaled_dot_product_attention match the reference on the CPU"
    with parts(attention):
        assert_close(masking.masked_softmax(scores), oracle(lambda impl: impl.masking.masked_softmax(scores)),
                     "masked_softmax without a mask")
        out, _ = masking.scaled_dot_product_attention(q, k, v, sdpa_mask)
        assert_close(out, oracle(lambda impl: impl.masking.scaled_dot_product_attention(q, k, v, sdpa_mask)[0]),
                     "the output of scaled_dot_product_attention")
    with parts("weights and outputs on the inputs' device", requires=attention):
        common.assert_on_meta(common.meta_call(masking.masked_softmax, scores), "masked_softmax without a mask", shape)
        common.assert_on_meta(common.meta_call(masking.masked_softmax, scores, mask), "masked_softmax", shape)
        out = common.meta_call(masking.scaled_dot_product_attention, q, k, v, sdpa_mask)
        common.assert_on_meta(None if out is None else out[0], "the output of scaled_dot_product_attention",
                              tuple(q.shape[:-1]) + (v.shape[-1],))

# autograder-hidden-canary-7d3e9a (never ships to students)
