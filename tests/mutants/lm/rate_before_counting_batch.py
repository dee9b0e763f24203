"""Trainer.step sets the learning rate before counting the batch's tokens, so every step uses the rate of the
previous step (the first step's rate is 0): count this batch first, then set learning_rate(self.tokens)."""
# target: trainer.py


def _step(self, x, y):
    x, y = x.to(self.device), y.to(self.device)
    length = self.item_length or x.shape[1]
    self.model.train()
    lr = learning_rate(self.tokens, self.config)
    for group in self.optimizer.param_groups:
        group["lr"] = lr
    self.tokens += x.shape[0] * length
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
