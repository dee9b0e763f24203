"""The masking suite's naming experiments (``autograder.grading.naming``): for each student function, a family of
fixed inputs, the ordinary and those where known mistakes part ways. Which input confirms which mistake is derived
from the values, never written here: add inputs where a new mistake could hide (a shape, a mask, a scale), not
mistakes. Each probe returns what the function returns (eval mode, no randomness), small enough to run on every
implementation of the catalogue when a test would name one. The positions suite carries masking.py and reuses these.
"""

import torch

from autograder.grading import Probe
from autograder.suites.masking import common


def _scores_and_mask(shape, seed, *, scale=3.0, masked_max=False, empty_row=False, dtype=torch.float64):
    """Scores of ``shape`` and a mask keeping about 60% (the first key of every row kept); ``masked_max``: a masked
    key holds each row's largest score (by 4 standard deviations); ``empty_row``: the last row keeps nothing."""
    scores = common.scores(shape, seed, dtype=torch.float64, scale=scale)
    mask = common.key_mask(shape, seed, keep=0.6)
    mask[..., 0] = True
    if masked_max:
        mask[..., -1] = False
        scores[..., -1] = scores.amax(dim=-1) + 4 * scale
    if empty_row:
        mask[..., -1, :] = False
    return scores.to(dtype), mask


def _softmax(shape, seed, **options):
    scores, mask = _scores_and_mask(shape, seed, **options)

    def probe(impl):
        return impl.masking.masked_softmax(scores, mask)
    return probe


def _softmax_broadcast():
    scores = common.scores((2, 3, 4, 5), 21, dtype=torch.float64)
    mask = common.key_mask((2, 1, 4, 5), 21, keep=0.6) | torch.eye(4, 5, dtype=torch.bool)

    def probe(impl):
        return impl.masking.masked_softmax(scores, mask)
    return probe


def _softmax_unmasked():
    scores = common.scores((3, 5), 22, dtype=torch.float64)

    def probe(impl):
        return impl.masking.masked_softmax(scores, None)
    return probe


def _attend(batch, t_q, t_k, d_k, d_v, seed, *, masked=True, empty_row=False):
    q, k, v = common.qkv(batch, t_q, t_k, d_k, d_v, seed, torch.float64)
    mask = None
    if masked:
        mask = common.key_mask((*batch[:1], 1, t_q, t_k), seed, keep=0.6)
        mask[..., 0] = True
        if empty_row:
            mask[..., -1, :] = False

    def probe(impl, q=q, k=k, v=v, mask=mask):
        return impl.masking.scaled_dot_product_attention(q, k, v, mask)
    return probe


def _self_attention(d_model, n_head, seed, *, lengths=None, dropout=0.0, T=5):
    state = common.attention_state(d_model, seed, torch.float64)
    x = common.inputs(2, T, d_model, seed, torch.float64)
    lengths = None if lengths is None else torch.tensor(lengths)

    def probe(impl, state=state, x=x, lengths=lengths):
        module = common.attention(impl, d_model, n_head, state, dropout=dropout)
        out = module(x) if lengths is None else module(x, lengths)
        return common.at_real_positions(out, lengths)
    return probe


PROBES = [
    Probe("causal_mask", "T = 1", lambda impl: impl.masking.causal_mask(1)),
    Probe("causal_mask", "T = 5", lambda impl: impl.masking.causal_mask(5)),
    Probe("padding_mask", "lengths 0, 2 and T", lambda impl: impl.masking.padding_mask(torch.tensor([0, 2, 5]), 5)),
    Probe("combined_mask", "lengths 1, 3 and T",
          lambda impl: impl.masking.combined_mask(torch.tensor([1, 3, 4]), 4)),
    Probe("lecture_causal_candidate", "", lambda impl: impl.masking.lecture_causal_candidate()),
    Probe("masked_softmax", "scores of size 3", _softmax((2, 3, 4, 6), 20)),
    Probe("masked_softmax", "float32", _softmax((3, 4, 5), 23, dtype=torch.float32)),
    Probe("masked_softmax", "a masked key holds the row's largest score", _softmax((2, 4, 6), 24, masked_max=True)),
    Probe("masked_softmax", "the same at scores of size 1e3", _softmax((2, 4, 6), 25, scale=1e3, masked_max=True)),
    Probe("masked_softmax", "scores of size 1e5", _softmax((2, 4, 6), 26, scale=1e5)),
    Probe("masked_softmax", "a row with every key masked", _softmax((2, 4, 5), 27, empty_row=True)),
    Probe("masked_softmax", "a mask broadcast over heads", _softmax_broadcast()),
    Probe("masked_softmax", "no mask", _softmax_unmasked()),
    Probe("scaled_dot_product_attention", "d_k 5, d_v 3, masked", _attend((2, 3), 4, 6, 5, 3, 30)),
    Probe("scaled_dot_product_attention", "d_k 9, unmasked", _attend((2,), 3, 5, 9, 4, 31, masked=False)),
    Probe("scaled_dot_product_attention", "a row with every key masked",
          _attend((1, 2), 3, 4, 6, 6, 32, empty_row=True)),
    Probe("split_heads", "D 12 into 3 heads", lambda impl: impl.masking.split_heads(common.vectors((2, 5, 12), 33), 3)),
    Probe("merge_heads", "3 heads of 4", lambda impl: impl.masking.merge_heads(common.vectors((2, 3, 5, 4), 34))),
    Probe("CausalSelfAttention", "D 16, 4 heads (head width sqrt(D))", _self_attention(16, 4, 40)),
    Probe("CausalSelfAttention", "D 32, 4 heads", _self_attention(32, 4, 41)),
    Probe("CausalSelfAttention", "D 12, 3 heads", _self_attention(12, 3, 42)),
    Probe("CausalSelfAttention", "D 8, 1 head", _self_attention(8, 1, 43)),
    Probe("CausalSelfAttention", "D 12, 2 heads, padded", _self_attention(12, 2, 44, lengths=[5, 2])),
    Probe("CausalSelfAttention", "eval mode with dropout 0.5", _self_attention(12, 3, 45, dropout=0.5)),
]
