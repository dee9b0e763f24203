"""The loss shifts the targets once more (logits[:, :-1] against targets[:, 1:], as models that receive unshifted
labels do): the dataset already made y[t] the character after x[t], so compare logits[:, t] with targets[:, t]."""
# target: model.py

_correct_forward = GPT.forward


def _forward(self, idx, targets=None):
    logits, _ = _correct_forward(self, idx)
    if targets is None:
        return logits, None
    flat = logits[:, :-1].reshape(-1, logits.shape[-1])
    return logits, F.cross_entropy(flat.to(torch.promote_types(flat.dtype, torch.float32)),
                                   targets[:, 1:].reshape(-1), ignore_index=PAD_ID)


GPT.forward = _forward

# autograder-hidden-canary-7d3e9a (never ships to students)
