"""The masked span's length is drawn from 1 .. n // 2 without the floor of 1: a document of one character (n // 2 = 0)
cannot be corrupted (randint(1, 0) raises)."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, n // 2)
    start = rng.randint(0, n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
