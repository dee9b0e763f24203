"""GPT.generate keeps its "row has stopped" flags per prompt position (idx.shape[1]) instead of per row
(idx.shape[0]): a batch of prompts with a stop id fails or stops on the wrong rows."""
# target: model.py
# unnamed: on a batch it fails or returns another shape, so there is no output to match

_correct_generate = GPT.generate


def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    if stop_id is None:
        return _correct_generate(self, idx, max_new_tokens, sample, temperature, top_k, stop_id, generator)
    done = torch.zeros(idx.shape[1], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits, _ = self(idx[:, -self.config.block_size:])
        following = logits[:, -1, :].float().argmax(dim=-1, keepdim=True)
        idx = torch.cat((idx, following), dim=1)
        done |= following[:, 0] == stop_id
        if bool(done.all()):
            break
    return idx


GPT.generate = _generate

# autograder-hidden-canary-7d3e9a (never ships to students)
