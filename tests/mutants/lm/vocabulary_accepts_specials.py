"""Vocabulary accepts a corpus that holds the pad or mask character: that character then has two ids (0 or 1,
and its place in the sorted corpus), so a pad in the text is read as a real character or the reverse."""
# target: dataset.py
# unnamed: caught by the error it fails to raise, not by an output


def _vocabulary_accepting_specials(self, text):
    self.itos = [PAD_CHAR, MASK_CHAR, *sorted(set(text))]
    self.stoi = {char: i for i, char in enumerate(self.itos)}


Vocabulary.__init__ = _vocabulary_accepting_specials

# autograder-hidden-canary-7d3e9a (never ships to students)
