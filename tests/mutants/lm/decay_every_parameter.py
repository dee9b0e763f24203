"""The optimiser is one AdamW over model.parameters() with weight_decay=config.weight_decay, so the biases, the
LayerNorm gains and shifts decay toward zero too: make two groups, the parameters with 2 or more dimensions with
config.weight_decay and the others with weight_decay=0.0."""
# target: trainer.py
# seen in: public GPT-from-scratch course repositories and nanoGPT forks (torch.optim.AdamW(model.parameters(), ...)
# with a weight decay, where minGPT and nanoGPT split the parameters into a decayed and an undecayed group)


def configure_optimizer(model, config):
    return torch.optim.AdamW(model.parameters(), lr=config.learning_rate, betas=config.betas,
                             weight_decay=config.weight_decay)

# autograder-hidden-canary-7d3e9a (never ships to students)
