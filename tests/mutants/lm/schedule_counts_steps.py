"""Trainer.step passes the number of steps to learning_rate instead of the number of tokens: warmup_tokens and
final_tokens are counted in tokens (B * the items' length per step), so the warm-up barely starts."""
# target: trainer.py


def _step(self, x, y):
    x, y = x.to(self.device), y.to(self.device)
    length = self.item_length or x.shape[1]
    self.model.train()
    self.tokens += x.shape[0] * length
    lr = learning_rate(self.steps + 1, self.config)
    for group in self.optimizer.param_groups:
        group["lr"] = lr
    with self.autocast():
        _, loss = self.model(x, y)
    self.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
    self.optimizer.step()
    self.steps += 1
    return loss.detach().float()


Trainer.step = _step

# autograder-hidden-canary-7d3e9a (never ships to students)
