"""The optimiser is Adam with weight_decay (an L2 penalty added to the gradient, then rescaled by Adam) instead of
AdamW, whose weight decay shrinks the parameters directly: use torch.optim.AdamW."""
# target: trainer.py


def configure_optimizer(model, config):
    decay = [p for _, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for _, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.Adam([{"params": decay, "weight_decay": config.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=config.learning_rate, betas=config.betas)

# autograder-hidden-canary-7d3e9a (never ships to students)
