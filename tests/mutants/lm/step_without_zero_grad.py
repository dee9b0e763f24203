"""The step never zeroes the gradients: backward adds each batch's gradients to those of every earlier step, so from
the second step on the optimiser follows their running sum; call self.optimizer.zero_grad() before the backward pass."""
# target: trainer.py
# seen in: public minGPT/nanoGPT forks and CS336 assignment 1 training loops (the zero_grad call left out)


def _step(self, x, y):
    length = self.item_length or x.shape[1]
    self.model.train()
    self.tokens += x.shape[0] * length
    for group in self.optimizer.param_groups:
        group["lr"] = learning_rate(self.tokens, self.config)
    with self.autocast():
        _, loss = self.model(x, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.grad_norm_clip)
    self.optimizer.step()
    self.steps += 1
    return loss.detach().float()


Trainer.step = _step

# autograder-hidden-canary-7d3e9a (never ships to students)
