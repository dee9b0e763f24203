"""The loss averages over every target, pads included (cross_entropy without ignore_index=0)."""
# target: model.py

_correct_forward = GPT.forward


def _forward(self, idx, targets=None):
    logits, _ = _correct_forward(self, idx)
    if targets is None:
        return logits, None
    return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1))


GPT.forward = _forward

# autograder-hidden-canary-7d3e9a (never ships to students)
