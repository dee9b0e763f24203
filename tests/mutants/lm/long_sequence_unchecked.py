"""GPT.forward does not refuse a sequence longer than block_size: the learned positions' lookup fails with an
IndexError instead of the documented ValueError."""
# target: model.py
# unnamed: only the exception it raises is checked, not a value to match


def _forward(self, idx, targets=None):
    x = self.tok_emb(idx)
    if self.pos_emb is not None:
        x = self.pos_emb(x)
    x = self.drop(x)
    for block in self.blocks:
        x = block(x)
    logits = self.head(self.ln_f(x))
    if targets is None:
        return logits, None
    flat = logits.reshape(-1, logits.shape[-1])
    return logits, F.cross_entropy(flat.to(torch.promote_types(flat.dtype, torch.float32)), targets.reshape(-1),
                                   ignore_index=PAD_ID)


GPT.forward = _forward

# autograder-hidden-canary-7d3e9a (never ships to students)
