"""corrupt pads the example to block_size characters instead of block_size + 1: x = s[:-1] and y = s[1:] must each
hold block_size ids, so s needs block_size + 1 characters; padded to block_size, x and y come out one short."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values
# seen in: public CS224N a5 student repositories (the masked string padded with PAD_CHAR * (block_size - len(...)))


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, max(1, n // 2))
    start = rng.randint(0, n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
