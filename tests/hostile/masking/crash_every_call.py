"""Crashes its worker (a segmentation fault) on every call of the functions the first tests use, so that the
grader must restart it again and again."""
CLASS = "7 stopping and crashing"
BASE = "reference"
EXPECT = "below"
PRESENT = ["had to be stopped 8 times"]
CODE = r'''
import ctypes as _ctypes


def _crash(*args, **kwargs):
    _ctypes.string_at(0)  # reads address 0: a real segmentation fault


causal_mask = padding_mask = combined_mask = masked_softmax = split_heads = merge_heads = _crash
lecture_causal_candidate = scaled_dot_product_attention = _crash
'''
