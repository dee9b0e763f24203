"""generate samples among the top_k logits only: torch.topk, the softmax of those k logits / temperature,
torch.multinomial over the k, and the chosen position mapped back to its id with gather; greedy decoding through
torch.max.

Style: the sampler many write from scratch (and that several public GPT tutorials use), instead of masking every
logit below the k-th with -inf and sampling over the whole vocabulary as nanoGPT does. It draws from the same
distribution the docstring states (softmax(logits / temperature) keeping only the top_k logits) with the same
generator, but its ids differ from the reference's for the same seed: the multinomial walks the k ids in topk's order
instead of the vocabulary's. The sampling test once compared the ids with the reference's exactly and took this
point from it (a false failure, found with this file); it now judges the draws by their distribution. Greedy
decoding, which predict and the retraining use, is unchanged, so validate does not retrain it. Written from scratch
for this catalogue.
"""
# target: model.py


def _generate(self, idx, max_new_tokens, sample=False, temperature=1.0, top_k=None, stop_id=None, generator=None):
    finished = torch.zeros(idx.shape[0], dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = self(idx[:, -self.config.block_size:])[0][:, -1, :].float()
        if not sample:
            following = torch.max(logits, dim=-1, keepdim=True).indices
        elif top_k is None:
            following = torch.multinomial(F.softmax(logits / temperature, dim=-1), 1, generator=generator)
        else:
            values, ids = torch.topk(logits / temperature, min(top_k, logits.shape[-1]), dim=-1)
            chosen = torch.multinomial(F.softmax(values, dim=-1), 1, generator=generator)
            following = ids.gather(-1, chosen)
        idx = torch.cat((idx, following), dim=1)
        if stop_id is not None:
            finished |= following.squeeze(-1) == stop_id
            if bool(finished.all()):
                break
    return idx


GPT.generate = torch.no_grad()(_generate)

# autograder-hidden-canary-7d3e9a (never ships to students)
