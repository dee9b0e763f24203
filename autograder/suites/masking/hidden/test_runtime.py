"""Hidden: CausalSelfAttention's runtime and peak memory, as ratios to the reference in the same run.

The limits are generous (a batched implementation written differently from the reference passes with a wide
margin); what they catch is the order-of-magnitude mistakes: Python loops over batch items, heads or
positions, and intermediates far larger than the computation needs.
"""

from autograder.grading import graded, timing
from autograder.suites.masking import common

COVERS = ["CausalSelfAttention", "scaled_dot_product_attention", "masked_softmax", "split_heads", "merge_heads",
          "causal_mask"]
D_MODEL, N_HEAD, BATCH, T = 256, 4, 4, 256
MAX_TIME_RATIO = 5


@graded(points=2, covers=COVERS, tags=["runtime"], timeout=120)
def test_runtime_and_memory(student, reference_student, device, parts, seed):
    """CausalSelfAttention: time and peak memory within a few times the reference's"""
    state = common.attention_state(D_MODEL, seed)

    def build(impl):
        module = common.attention(impl, D_MODEL, N_HEAD, state)
        return module.to(device) if device != "cpu" else module

    def inputs(round_index: int):
        return (common.inputs(BATCH, T, D_MODEL, seed + 100 + round_index),), {}

    comparison = timing.compare(build(student), build(reference_student), inputs, device=device,
                                what=f"CausalSelfAttention forward on x of shape ({BATCH}, {T}, {D_MODEL})",
                                max_time_ratio=MAX_TIME_RATIO)
    timing.grade(comparison, parts, max_time_ratio=MAX_TIME_RATIO, max_memory_ratio=4)

# autograder-hidden-canary-7d3e9a (never ships to students)
