"""The step clips every gradient entry to [-grad_norm_clip, grad_norm_clip] (clip_grad_value_) instead of scaling
all the gradients together so that their total norm is at most grad_norm_clip (clip_grad_norm_): the direction of
the update changes, and the total norm can stay far above the limit."""
# target: trainer.py
# seen in: public course and tutorial training loops (gradients clamped element-wise where a norm clip is asked for)


def _step(self, x, y):
    length = self.item_length or x.shape[1]
    self.model.train()
    self.tokens += x.shape[0] * length
    for group in self.optimizer.param_groups:
        group["lr"] = learning_rate(self.tokens, self.config)
    with self.autocast():
        _, loss = self.model(x, y)
    self.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_value_(self.model.parameters(), self.config.grad_norm_clip)
    self.optimizer.step()
    self.steps += 1
    return loss.detach().float()


Trainer.step = _step

# autograder-hidden-canary-7d3e9a (never ships to students)
