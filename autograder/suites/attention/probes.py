"""The attention suite's naming experiments (``autograder.grading.naming``): for each function of the notebook whose
answer is a value (not a design with many right answers: copy_query, average_query and the heads' queries are
graded by what they do), a family of fixed inputs, the ordinary and those where known mistakes part ways (a batch of
queries, a width that is not the number of keys, a single query). Which input confirms which mistake is derived from
the values, never written here: add inputs where a new mistake could hide, not mistakes.
"""

import torch

from autograder.grading import Probe

F64 = torch.float64


def _tensors(seed, *shapes):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=generator, dtype=F64) for shape in shapes]


def _call(name, seed, *shapes):
    """A probe of ``attention.<name>`` on standard normal tensors of ``shapes``."""
    arguments = _tensors(seed, *shapes)

    def probe(impl):
        return getattr(impl.attention, name)(*arguments)
    return probe


def _linear(seed, shape):
    (scores,) = _tensors(seed, shape)
    scores = scores.abs() + 0.1  # positive, so that every sum is far from zero

    def probe(impl):
        return impl.attention.linear_weights(scores)
    return probe


def _swap(seed, d):
    (x,) = _tensors(seed, (4, d))
    weights = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=F64)

    def probe(impl):
        return impl.attention.swap_x2_x3(x, weights)
    return probe


def _spread(seed, samples, d):
    outputs, target = _tensors(seed, (samples, d), (d,))

    def probe(impl):
        return impl.attention.spread(outputs, target)
    return probe


PROBES = [
    Probe("dot_scores", "one query, 5 keys of width 3", _call("dot_scores", 1, (3,), (5, 3))),
    Probe("dot_scores", "a batch of 2 queries", _call("dot_scores", 2, (2, 4), (2, 6, 4))),
    Probe("multiplicative_scores", "one query, W 3 x 4", _call("multiplicative_scores", 3, (3,), (3, 4), (5, 4))),
    Probe("multiplicative_scores", "a batch of 2 queries, W 2 x 5",
          _call("multiplicative_scores", 4, (2, 2), (2, 5), (2, 3, 5))),
    Probe("scaled_dot_scores", "width 9, 4 keys", _call("scaled_dot_scores", 5, (9,), (4, 9))),
    Probe("scaled_dot_scores", "a batch, width 4, 7 keys", _call("scaled_dot_scores", 6, (3, 4), (3, 7, 4))),
    Probe("dot_product_attention", "one query, 5 keys", _call("dot_product_attention", 7, (3,), (5, 3), (5, 2))),
    Probe("dot_product_attention", "a batch of 4 queries, 3 keys",
          _call("dot_product_attention", 8, (4, 6), (4, 3, 6), (4, 3, 5))),
    Probe("aaba", "q = (0.5, 2)", lambda impl: impl.attention.aaba(torch.tensor([0.5, 2.0], dtype=F64))),
    Probe("aaba", "q = (-1, 0.3)", lambda impl: impl.attention.aaba(torch.tensor([-1.0, 0.3], dtype=F64))),
    Probe("smallest_scale", "p = 0.9", lambda impl: impl.attention.smallest_scale(0.9)),
    Probe("smallest_scale", "p = 0.3", lambda impl: impl.attention.smallest_scale(0.3)),
    Probe("linear_weights", "3 rows of 4", _linear(9, (3, 4))),
    Probe("linear_weights", "one row of 5", _linear(10, (5,))),
    Probe("self_attention", "T 4, d 3, d_k 2, d_v 5",
          _call("self_attention", 11, (4, 3), (3, 2), (3, 2), (3, 5))),
    Probe("self_attention", "a batch, T 3, d 4", _call("self_attention", 12, (2, 3, 4), (4, 4), (4, 4), (4, 3))),
    Probe("swap_x2_x3", "d 3", _swap(13, 3)),
    Probe("attend_heads", "2 heads, 3 samples of 4 keys",
          _call("attend_heads", 14, (2, 3), (3, 4, 3), (4, 2))),
    Probe("spread", "5 samples of width 3", _spread(15, 5, 3)),
    Probe("spread", "2 samples of width 6", _spread(16, 2, 6)),
]
