"""Vocabulary refuses a corpus holding the pad or mask character with assert (AssertionError), not the documented
ValueError."""
# target: dataset.py
# unnamed: only the exception it raises is checked, not a value to match

_CorrectVocabulary = Vocabulary


class Vocabulary(_CorrectVocabulary):
    def __init__(self, text):
        assert PAD_CHAR not in text and MASK_CHAR not in text, "reserved character in the corpus"
        super().__init__(text)

# autograder-hidden-canary-7d3e9a (never ships to students)
