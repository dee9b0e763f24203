"""Weight decay applies to every parameter, biases and LayerNorm gains included (one AdamW group)."""
# target: trainer.py


def configure_optimizer(model, config):
    groups = [{"params": list(model.parameters()), "weight_decay": config.weight_decay}, {"params": [],
              "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas)

# autograder-hidden-canary-7d3e9a (never ships to students)
