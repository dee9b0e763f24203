"""Hidden tests found by mutation testing (``autograder validate --mutate masking``): what the public dropout test
lets through. It asks that dropout changes the training-mode output, which either of the module's two dropout sites
does alone, so leaving one out kept every point."""

import torch

from autograder.grading import assert_close, assert_tensor, graded
from autograder.suites.masking import common

COVERS = ["CausalSelfAttention", "scaled_dot_product_attention"]
P = 0.5


def _one_site(student, state: dict, x: torch.Tensor, seed: int, off: str) -> torch.Tensor:
    """The training-mode output (dropout ``P``) of a module whose dropout ``off`` is put in eval mode."""
    module = common.attention(student, 16, 4, state, dropout=P, train=True)
    getattr(module, off).eval()
    student.seed(seed)
    out = module(x)
    assert_tensor(out, "the training-mode output", shape=tuple(x.shape), dtype=x.dtype)
    return out


@graded(points=1, covers=COVERS)
def test_each_dropout_site(student, parts, seed):
    """CausalSelfAttention: dropout on the attention weights and on the output, each on its own"""
    state = common.attention_state(16, seed=seed)
    x = common.inputs(2, 6, 16, seed=seed)
    plain = common.attention(student, 16, 4, state, dropout=0.0)(x)
    with parts("the output's dropout alone (self.attn_dropout in eval mode)"):
        out = _one_site(student, state, x, seed, "attn_dropout")
        kept = out != 0
        assert not kept.all(), ("with dropout=0.5 and self.attn_dropout in eval mode, no output entry was zeroed: "
                                "apply self.resid_dropout to the output projection")
        assert_close(out[kept], plain[kept] / (1 - P), "the output entries dropout kept (the no-dropout output "
                     "scaled by 1 / (1 - p): self.resid_dropout is the last step, after the projection)")
    with parts("the attention weights' dropout alone (self.resid_dropout in eval mode)"):
        out = _one_site(student, state, x, seed, "resid_dropout")
        assert not torch.allclose(out, plain), ("with dropout=0.5 and self.resid_dropout in eval mode the output "
                                                "equals the no-dropout output: pass self.attn_dropout to "
                                                "scaled_dot_product_attention, for the weights")
