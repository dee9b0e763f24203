"""top_k keeps one token fewer than asked: the filter drops every logit <= the k-th largest, the k-th included (keep the
logits >= the k-th largest, mask those below it)."""
# target: model.py


@torch.no_grad()
def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    done = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits, _ = self(idx[:, -self.config.block_size:])
        logits = logits[:, -1, :].float()
        if sample:
            logits = logits / temperature
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
                logits = logits.masked_fill(logits <= kth, float("-inf"))
            following = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)
        else:
            following = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat((idx, following), dim=1)
        if stop_id is not None:
            done |= following[:, 0] == stop_id
            if bool(done.all()):
                break
    return idx


GPT.generate = _generate

# autograder-hidden-canary-7d3e9a (never ships to students)
