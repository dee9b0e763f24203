"""learning_rate divides the decay's progress by at least 2 tokens (max(2.0, final - warmup)) instead of 1: a decay of
one token runs at half speed."""
# target: trainer.py


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1.0, config.warmup_tokens)
    progress = (tokens - config.warmup_tokens) / max(2.0, config.final_tokens - config.warmup_tokens)
    return config.learning_rate * max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))

# autograder-hidden-canary-7d3e9a (never ships to students)
