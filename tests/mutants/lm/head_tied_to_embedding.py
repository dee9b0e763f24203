"""The output head shares its weight with the token embedding (head.weight = tok_emb.weight, GPT-2's weight tying):
in this assignment they are two separate parameters, so loading a checkpoint overwrites one with the other."""
# target: model.py

_correct_init = GPT.__init__


def _tied_init(self, config):
    _correct_init(self, config)
    self.head.weight = self.tok_emb.weight


GPT.__init__ = _tied_init

# autograder-hidden-canary-7d3e9a (never ships to students)
