"""Vocabulary.encode looks characters up without checking them: a character outside the vocabulary raises KeyError,
not the documented ValueError that names it."""
# target: dataset.py
# unnamed: only the exception it raises is checked, not a value to match


def _encode(self, text):
    return torch.tensor([self.stoi[char] for char in text], dtype=torch.long)


Vocabulary.encode = _encode

# autograder-hidden-canary-7d3e9a (never ships to students)
