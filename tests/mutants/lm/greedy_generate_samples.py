"""Greedy generation samples from the softmax instead of taking the most likely token."""
# target: model.py
# unnamed: it samples, so its ids are random: no recorded value can match them

_correct_generate = GPT.generate


@torch.no_grad()
def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    return _correct_generate(self, idx, max_new_tokens, True, temperature, top_k, stop_id, generator)


GPT.generate = _generate

# autograder-hidden-canary-7d3e9a (never ships to students)
