"""The parameters to decay are chosen by name (every parameter called ...weight), so the LayerNorm gains decay too:
choose by shape, the parameters with 2 or more dimensions (the matrices and embedding tables)."""
# target: trainer.py


def configure_optimizer(model, config):
    decay = [p for name, p in model.named_parameters() if name.endswith("weight")]
    rest = [p for name, p in model.named_parameters() if not name.endswith("weight")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": config.weight_decay},
                              {"params": rest, "weight_decay": 0.0}], lr=config.learning_rate, betas=config.betas)

# autograder-hidden-canary-7d3e9a (never ships to students)
