"""Raises exceptions meant to break the grader's reporting: one whose str() raises, a 50 MB message, a
KeyboardInterrupt, a GeneratorExit and a SystemExit carrying an object."""
CLASS = "5 errors keep credit"
BASE = "reference"
EXPECT = "below"
CODE = r'''
class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("cannot print me")


def causal_mask(T, device=None):
    raise _Unprintable()


def padding_mask(lengths, T):
    raise ValueError("x" * 50_000_000)


def lecture_causal_candidate():
    raise KeyboardInterrupt()


def split_heads(x, n_head):
    raise GeneratorExit()


def merge_heads(x):
    raise SystemExit(object())
'''
