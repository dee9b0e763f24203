"""The cosine decay has no floor: the rate falls all the way to 0 at final_tokens, where it must stop at 10 % of the
full rate (max(0.1, 0.5 * (1 + cos(pi * progress))))."""
# target: trainer.py


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1.0, config.warmup_tokens)
    progress = (tokens - config.warmup_tokens) / max(1.0, config.final_tokens - config.warmup_tokens)
    return config.learning_rate * 0.5 * (1.0 + math.cos(math.pi * progress))

# autograder-hidden-canary-7d3e9a (never ships to students)
