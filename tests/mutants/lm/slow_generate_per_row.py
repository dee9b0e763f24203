"""generate runs the model on one prompt at a time (a Python loop over the batch) instead of on the whole batch."""
# slow
# target: model.py
# unnamed: its values are right; only the runtime test catches it

_batched_generate = GPT.generate


@torch.no_grad()
def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    if idx.shape[0] == 1:
        return _batched_generate(self, idx, max_new_tokens, sample, temperature, top_k, stop_id, generator)
    # Each row on its own (same tokens), cut to the length the batched loop would have reached.
    rows = [_generate(self, row[None], max_new_tokens, sample, temperature, top_k, None, generator)[0] for row in idx]
    out = torch.stack(rows)
    if stop_id is not None:
        generated = out[:, idx.shape[1]:] == stop_id
        seen = generated.cummax(dim=1).values.all(dim=0)
        if bool(seen.any()):
            out = out[:, :idx.shape[1] + int(seen.nonzero()[0]) + 1]
    return out


GPT.generate = _generate

# autograder-hidden-canary-7d3e9a (never ships to students)
