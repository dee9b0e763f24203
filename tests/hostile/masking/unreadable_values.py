"""Answers with values the checks do not expect (a dict, a string, an object handle, complex numbers, a deeply
nested list, a tensor that requires grad), so that the grader's own checking code raises instead of failing an
assertion."""
CLASS = "5 errors keep credit"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import numpy as _np


class _Opaque:
    shape = (5, 5)

    def __getattr__(self, name):
        raise RuntimeError("no")


def causal_mask(T, device=None):
    return {"shape": (T, T), "mask": "lower"}


def padding_mask(lengths, T):
    return _np.ones((len(lengths), T), dtype=_np.complex128)


def masked_softmax(scores, mask=None):
    return _Opaque()


def split_heads(x, n_head):
    nested = []
    for _ in range(70):
        nested = [nested]
    return nested


def merge_heads(x):
    return "merged"


def combined_mask(lengths, T):
    return torch.ones(len(lengths), T, T, requires_grad=True) > 0
'''
