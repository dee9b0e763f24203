"""GPT.forward silently keeps the last block_size tokens of a longer input (as generate crops its context) instead
of raising a ValueError: the logits no longer line up with the input, and a caller never learns why."""
# target: model.py
# unnamed: caught by the error it fails to raise, not by an output

_forward_refusing = GPT.forward


def _forward_cropping(self, idx, targets=None):
    idx = idx[:, -self.config.block_size:]
    targets = None if targets is None else targets[:, -self.config.block_size:]
    return _forward_refusing(self, idx, targets)


GPT.forward = _forward_cropping

# autograder-hidden-canary-7d3e9a (never ships to students)
