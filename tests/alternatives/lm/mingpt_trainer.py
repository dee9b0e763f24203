"""A minGPT-style trainer step: the optimiser's groups found by walking the modules (Linear and Embedding weights
decay, biases and LayerNorm gains do not, any other parameter by its shape), checked to cover every parameter once;
the schedule as minGPT's lr_mult; the step as minGPT's loop body (model.zero_grad, forward, backward,
clip_grad_norm_, optimizer.step), with the rate set from the tokens counted before the step as the handout asks.
Correct: it must keep full marks."""
# target: trainer.py
# retraining


def learning_rate(tokens, config):
    if config.lr_decay:
        if tokens < config.warmup_tokens:
            lr_mult = float(tokens) / float(max(1, config.warmup_tokens))
        else:
            progress = float(tokens - config.warmup_tokens) / float(max(1, config.final_tokens - config.warmup_tokens))
            lr_mult = max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))
        return config.learning_rate * lr_mult
    return config.learning_rate


def configure_optimizer(model, config):
    decay, no_decay = set(), set()
    whitelist, blacklist = (torch.nn.Linear, torch.nn.Embedding), (torch.nn.LayerNorm,)
    for mn, m in model.named_modules():
        for pn, p in m.named_parameters(recurse=False):
            fpn = f"{mn}.{pn}" if mn else pn
            if pn.endswith("bias") or (pn.endswith("weight") and isinstance(m, blacklist)):
                no_decay.add(fpn)
            elif pn.endswith("weight") and isinstance(m, whitelist):
                decay.add(fpn)
            else:
                (decay if p.dim() >= 2 else no_decay).add(fpn)
    param_dict = dict(model.named_parameters())
    assert not decay & no_decay, f"parameters {decay & no_decay} made it into both sets"
    assert not param_dict.keys() - (decay | no_decay), "some parameters were not separated into decay/no_decay"
    optim_groups = [
        {"params": [p for n, p in param_dict.items() if n in decay], "weight_decay": config.weight_decay},
        {"params": [p for n, p in param_dict.items() if n in no_decay], "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(optim_groups, lr=config.learning_rate, betas=config.betas)


def _mingpt_step(self, x, y):
    x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
    model, config = self.model, self.config
    model.train()
    self.tokens += x.size(0) * (self.item_length or x.size(1))
    lr = learning_rate(self.tokens, config)
    for param_group in self.optimizer.param_groups:
        param_group["lr"] = lr
    with self.autocast():
        logits, loss = model(x, y)
    model.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
    self.optimizer.step()
    self.steps += 1
    return loss.detach().float()


Trainer.step = _mingpt_step

# autograder-hidden-canary-7d3e9a (never ships to students)
