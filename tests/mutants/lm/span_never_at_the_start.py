"""The masked span's start is drawn from 1 .. n - k instead of 0 .. n - k: the span never begins the kept text, so
the model never learns to fill in a document's first characters (the prefix may be empty)."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values
# seen in: public CS224N a5 student repositories (the mask's position drawn with random.randint(1, ...))


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, max(1, n // 2))
    start = rng.randint(min(1, n - span), n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
