"""Your carried masking.py, checked with the masking assignment's own public checks (0 points, information).

positions.py builds on masking.py: the attention in attention_ffn and RotaryCausalSelfAttention is yours from the
masking assignment. This test tells you early when a failure further down comes from there; tests that build on
masking.py repeat the pointer when they fail.
"""

from autograder.grading import graded, run_check
from autograder.suites.masking.public import test_1_masks as masks
from autograder.suites.masking.public import test_2_softmax as softmax
from autograder.suites.masking.public import test_3_attention as attention
from autograder.suites.masking.public import test_4_self_attention as self_attention

CHECKS = [masks.test_causal_mask, masks.test_combined_mask, softmax.test_matches_reference,
          attention.test_sdpa_matches_reference, attention.test_heads, self_attention.test_forward_matches_reference,
          self_attention.test_forward_with_padding_matches_reference]


@graded(points=0, checks_carried="masking")
def test_carried_masking(student, oracle, parts):
    """Carried masking.py: passes the masking assignment's checks that positions builds on (information, 0 points)"""
    for check in CHECKS:
        with parts(f"masking: {check.__doc__.strip().splitlines()[0]}"):
            run_check(check, student=student, masking=student.masking, oracle=oracle)
    if not parts.all_passed:
        raise AssertionError("Your masking.py fails some of its own checks, listed above. attention_ffn and "
                             "RotaryCausalSelfAttention use it, so fix masking.py first (`autograder check masking "
                             "FOLDER` runs all of its public tests), then copy it into this submission again.")
