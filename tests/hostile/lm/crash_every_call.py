"""Crashes its worker (a segmentation fault) whenever the vocabulary or a model is built, again and again."""
CLASS = "7 stopping and crashing"
BASE = "skeleton"
EXPECT = "zero"
TARGET = "dataset.py"
PRESENT = ["had to be stopped 8 times"]
CODE = r'''
import ctypes as _ctypes


class Vocabulary:
    def __init__(self, *args, **kwargs):
        _ctypes.string_at(0)  # reads address 0: a real segmentation fault


class CharCorruptionDataset(Vocabulary):
    pass


class NameDataset(Vocabulary):
    pass
'''
