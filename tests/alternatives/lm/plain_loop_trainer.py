"""A plain PyTorch training step, written without the library helpers: the warm-up and cosine written out step by
step, the optimiser's groups filled in one loop over the parameters, and the gradient norm computed and clipped by
hand instead of with clip_grad_norm_. Correct: it must keep full marks."""
# target: trainer.py
# retraining


def learning_rate(tokens, config):
    base = config.learning_rate
    if not config.lr_decay:
        return base
    warmup = max(1.0, float(config.warmup_tokens))
    if tokens < config.warmup_tokens:
        return base * (float(tokens) / warmup)
    span = max(1.0, float(config.final_tokens) - float(config.warmup_tokens))
    done = (float(tokens) - float(config.warmup_tokens)) / span
    multiplier = (1.0 + math.cos(done * math.pi)) / 2.0
    if multiplier < 0.1:
        multiplier = 0.1
    return base * multiplier


def configure_optimizer(model, config):
    matrices, vectors = [], []
    for _name, parameter in model.named_parameters():
        if parameter.ndim >= 2:
            matrices.append(parameter)
        else:
            vectors.append(parameter)
    return torch.optim.AdamW([dict(params=matrices, weight_decay=config.weight_decay),
                              dict(params=vectors, weight_decay=0.0)],
                             lr=config.learning_rate, betas=tuple(config.betas))


def _plain_step(self, x, y):
    x = x.to(self.device)
    y = y.to(self.device)
    self.model.train()
    batch, length = x.shape[0], self.item_length if self.item_length else x.shape[1]
    self.tokens = self.tokens + batch * length
    rate = learning_rate(self.tokens, self.config)
    for group in self.optimizer.param_groups:
        group["lr"] = rate
    for parameter in self.model.parameters():
        parameter.grad = None
    with self.autocast():
        _logits, loss = self.model(x, y)
    loss.backward()
    grads = [p.grad for p in self.model.parameters() if p.grad is not None]
    total = torch.sqrt(sum((g.detach().float() ** 2).sum() for g in grads))
    scale = self.config.grad_norm_clip / (total + 1e-6)
    if scale < 1:
        for g in grads:
            g.mul_(scale.to(g.dtype))
    self.optimizer.step()
    self.steps = self.steps + 1
    return loss.detach().float()


Trainer.step = _plain_step

# autograder-hidden-canary-7d3e9a (never ships to students)
