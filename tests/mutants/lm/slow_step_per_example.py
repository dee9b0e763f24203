"""Trainer.step runs the forward and backward passes one example at a time (a Python loop over the batch)."""
# slow
# target: trainer.py
# unnamed: its values are right; only the runtime test catches it

import torch.nn.functional as F


def _step(self, x, y):
    x, y = x.to(self.device), y.to(self.device)
    length = self.item_length or x.shape[1]
    self.model.train()
    self.tokens += x.shape[0] * length
    lr = learning_rate(self.tokens, self.config)
    for group in self.optimizer.param_groups:
        group["lr"] = lr
    self.optimizer.zero_grad(set_to_none=True)
    counted = max(1, int((y != PAD_ID).sum()))
    total = torch.zeros(())
    for row in range(x.shape[0]):  # the same mean loss and gradients, one example at a time
        with self.autocast():
            logits, _ = self.model(x[row:row + 1])
        loss = F.cross_entropy(logits[0].float(), y[row], ignore_index=PAD_ID, reduction="sum") / counted
        loss.backward()
        total += loss.detach().cpu()
    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
    self.optimizer.step()
    self.steps += 1
    return total.float()


Trainer.step = _step

# autograder-hidden-canary-7d3e9a (never ships to students)
