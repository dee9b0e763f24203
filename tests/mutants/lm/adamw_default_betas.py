"""The optimiser ignores config.betas and keeps AdamW's default betas (0.9, 0.999): pass betas=config.betas (the
recipe uses (0.9, 0.95))."""
# target: trainer.py


def configure_optimizer(model, config):
    decay = [p for _, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for _, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                              {"params": rest, "weight_decay": 0.0}], lr=config.learning_rate)

# autograder-hidden-canary-7d3e9a (never ships to students)
