"""The cosine's progress is capped at 1, so past final_tokens the rate stays at its 10 % floor: minGPT and CS224N
let progress = (tokens - warmup_tokens) / (final_tokens - warmup_tokens) run on past 1, and the cosine climbs back
(a run longer than final_tokens, such as CS224N's 650 pretraining epochs over a 200-epoch decay, rises and falls
again)."""
# target: trainer.py


def learning_rate(tokens, config):
    if not config.lr_decay:
        return config.learning_rate
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1.0, config.warmup_tokens)
    progress = min(1.0, (tokens - config.warmup_tokens) / max(1.0, config.final_tokens - config.warmup_tokens))
    return config.learning_rate * max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))

# autograder-hidden-canary-7d3e9a (never ships to students)
