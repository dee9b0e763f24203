"""Hidden tests found by mutation testing (``autograder validate --mutate masking``, docs/authoring.md): what the
other tests let through."""

from autograder.grading import graded
from autograder.suites.masking import common


@graded(points=1, covers=["CausalSelfAttention", "scaled_dot_product_attention"])
def test_each_dropout_site(student, parts, seed):
    """CausalSelfAttention: dropout on the attention weights and on the output, each on its own"""
    state = common.attention_state(16, seed=seed)
    common.assert_each_dropout_site(
        student, lambda p, train: common.attention(student, 16, 4, state, dropout=p, train=train),
        common.inputs(2, 6, 16, seed=seed), seed, parts)
