"""The learning-rate warm-up is skipped: the rate starts at its full value and only decays."""
# target: trainer.py


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    progress = max(0.0, tokens - config.warmup_tokens) / max(1.0, config.final_tokens - config.warmup_tokens)
    return config.learning_rate * max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))

# autograder-hidden-canary-7d3e9a (never ships to students)
