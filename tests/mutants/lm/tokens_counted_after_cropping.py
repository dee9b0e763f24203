"""Trainer.step counts the tokens of the cropped batch (x.numel()) instead of B times the items' length: with batches
cropped to their longest item the schedule runs on fewer tokens than CS224N's trainer counts, and its warm-up and
decay come late."""
# target: trainer.py
# unnamed: checked by the token count after training, not by a comparison of values


def _step_counting_cropped(self, x, y):
    x, y = x.to(self.device), y.to(self.device)
    self.model.train()
    self.tokens += x.numel()
    lr = learning_rate(self.tokens, self.config)
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


Trainer.step = _step_counting_cropped

# autograder-hidden-canary-7d3e9a (never ships to students)
