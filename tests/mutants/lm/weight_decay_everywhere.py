"""Weight decay applies to parameters that must not decay: the LayerNorm gains (and perhaps the biases). Only the
matrices (2 or more dimensions) belong in the decayed group."""
# target: trainer.py


def configure_optimizer(model, config):
    groups = [{"params": list(model.parameters()), "weight_decay": config.weight_decay}, {"params": [],
              "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas)

# autograder-hidden-canary-7d3e9a (never ships to students)
