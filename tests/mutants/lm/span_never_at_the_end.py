"""The masked span's start is drawn from 0 .. n - k - 1 (randrange's end, with randint): the span never ends the kept
text, and a span as long as the text cannot be placed at all."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, max(1, n // 2))
    start = rng.randint(0, n - span - 1)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
