"""Gradients are never clipped: the step ignores grad_norm_clip."""
# target: trainer.py


def _step(self, x, y):
    length = self.item_length or x.shape[1]
    self.model.train()
    self.tokens += x.shape[0] * length
    for group in self.optimizer.param_groups:
        group["lr"] = learning_rate(self.tokens, self.config)
    _, loss = self.model(x, y)
    self.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    self.optimizer.step()
    self.steps += 1
    return loss.detach().float()


Trainer.step = _step

# autograder-hidden-canary-7d3e9a (never ships to students)
