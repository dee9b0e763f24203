"""The finetuning targets keep the question's characters: the loss also trains the model to predict the question
it is reading (the first len(question) - 1 targets should be the pad id)."""
# target: dataset.py


def _getitem(self, index):
    return shift(self.example(index), self.vocab)


NameDataset.__getitem__ = _getitem

# autograder-hidden-canary-7d3e9a (never ships to students)
