"""GPT.generate sets its "row has stopped" flags from the last token only (done = next == stop_id instead of
done |= ...): a row that produced stop_id earlier counts as running again, so a batch whose rows stop at different
steps runs on to max_new_tokens. Keep each row's flag once set."""
# target: model.py
# unnamed: its ids are right and only too many; the shape tells it, not a value

_kept_generate = GPT.generate


def _generate_flags_not_kept(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None,
                             generator=None):
    if stop_id is None or sample:
        return _kept_generate(self, idx, max_new_tokens, sample, temperature, top_k, stop_id, generator)
    for _ in range(max_new_tokens):
        logits, _ = self(idx[:, -self.config.block_size:])
        following = logits[:, -1, :].float().argmax(dim=-1, keepdim=True)
        idx = torch.cat((idx, following), dim=1)
        done = following[:, 0] == stop_id
        if bool(done.all()):
            break
    return idx


GPT.generate = _generate_flags_not_kept

# autograder-hidden-canary-7d3e9a (never ships to students)
