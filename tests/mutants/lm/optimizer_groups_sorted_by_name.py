"""configure_optimizer collects the parameter names of each group in a set and builds the group from the sorted
names (as minGPT does): the groups hold the right parameters in alphabetical order, not model.named_parameters()
order, so an optimiser state saved by another trainer loads into the wrong parameters."""
# target: trainer.py
# unnamed: checked by the order of the groups' parameters, not by a comparison of values


def configure_optimizer(model, config):
    parameters = dict(model.named_parameters())
    decay = {name for name, p in parameters.items() if p.dim() >= 2}
    no_decay = set(parameters) - decay
    groups = [{"params": [parameters[name] for name in sorted(decay)], "weight_decay": config.weight_decay},
              {"params": [parameters[name] for name in sorted(no_decay)], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas)

# autograder-hidden-canary-7d3e9a (never ships to students)
