"""The loss ignores the mask character's id (ignore_index=1) instead of the pad id 0: pads are then trained on and
the masked span's markers are not."""
# target: model.py

_correct_forward = GPT.forward


def _forward(self, idx, targets=None):
    logits, _ = _correct_forward(self, idx)
    if targets is None:
        return logits, None
    flat = logits.reshape(-1, logits.shape[-1])
    return logits, F.cross_entropy(flat.to(torch.promote_types(flat.dtype, torch.float32)), targets.reshape(-1),
                                   ignore_index=1)


GPT.forward = _forward

# autograder-hidden-canary-7d3e9a (never ships to students)
