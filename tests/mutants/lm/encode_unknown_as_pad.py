"""Vocabulary.encode gives a character outside the vocabulary the pad id (stoi.get(char, 0)) instead of raising a
ValueError that names it: a corpus mismatch goes unnoticed and the model reads pads."""
# target: dataset.py
# unnamed: caught by the error it fails to raise, not by an output


def _encode_unknown_as_pad(self, text):
    return torch.tensor([self.stoi.get(char, 0) for char in text], dtype=torch.long)


Vocabulary.encode = _encode_unknown_as_pad

# autograder-hidden-canary-7d3e9a (never ships to students)
