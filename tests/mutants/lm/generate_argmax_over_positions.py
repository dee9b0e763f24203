"""Greedy generation takes the argmax over the positions (axis 1 of the logits) instead of over the vocabulary."""
# target: model.py

_correct_generate = GPT.generate


@torch.no_grad()
def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    if sample:
        return _correct_generate(self, idx, max_new_tokens, sample, temperature, top_k, stop_id, generator)
    for _ in range(max_new_tokens):
        logits, _ = self(idx[:, -self.config.block_size:])
        following = logits.argmax(dim=1)[:, -1:]
        idx = torch.cat((idx, following), dim=1)
    return idx


GPT.generate = _generate

# autograder-hidden-canary-7d3e9a (never ships to students)
