"""The cosine is rescaled to end at the floor (0.1 + 0.9 * 0.5 * (1 + cos(pi * progress)), nanoGPT's min_lr) instead
of being cut off by it: the multiplier is max(0.1, 0.5 * (1 + cos(pi * progress))), which reaches 10 % before
final_tokens (at progress 0.795)."""
# target: trainer.py


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1.0, config.warmup_tokens)
    progress = (tokens - config.warmup_tokens) / max(1.0, config.final_tokens - config.warmup_tokens)
    return config.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))

# autograder-hidden-canary-7d3e9a (never ships to students)
