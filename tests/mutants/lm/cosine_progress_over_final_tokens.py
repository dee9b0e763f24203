"""The cosine's progress divides by final_tokens instead of by the length of the decay, final_tokens -
warmup_tokens: progress = (tokens - warmup_tokens) / (final_tokens - warmup_tokens), which reaches 1 at final_tokens;
over final_tokens it reaches only 1 - warmup_tokens / final_tokens there, so the rate decays too slowly."""
# target: trainer.py
# seen in: public CS336 assignment 1 student repositories ((it - warmup_iters) / cosine_cycle_iters, where
# cosine_cycle_iters is the end of the decay, not its length)


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1.0, config.warmup_tokens)
    progress = (tokens - config.warmup_tokens) / max(1.0, config.final_tokens)
    return config.learning_rate * max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))

# autograder-hidden-canary-7d3e9a (never ships to students)
