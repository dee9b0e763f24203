"""GPT.forward leaves out the dropout on the embeddings (self.drop): only the blocks drop in training mode."""
# target: model.py
# unnamed: only a property of training-mode outputs catches it, not a value to match

_correct_forward = GPT.forward


def _forward(self, idx, targets=None):
    drop, self.drop = self.drop, torch.nn.Identity()
    try:
        return _correct_forward(self, idx, targets)
    finally:
        self.drop = drop


GPT.forward = _forward

# autograder-hidden-canary-7d3e9a (never ships to students)
