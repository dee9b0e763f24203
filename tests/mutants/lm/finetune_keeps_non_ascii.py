"""NameDataset keeps the non-ASCII characters of the questions and answers: CS224N reads the pairs as ASCII
(data.encode('utf-8').decode('ascii', errors='ignore')), so they vanish from both."""
# target: dataset.py


def _init(self, pairs, vocab, block_size):
    self.pairs = [(str(question), str(answer)) for question, answer in pairs]
    self.vocab = vocab
    self.block_size = block_size


NameDataset.__init__ = _init

# autograder-hidden-canary-7d3e9a (never ships to students)
