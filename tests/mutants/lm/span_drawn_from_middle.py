"""The masked span's length is drawn from the middle of the range (n // 8 .. 3n // 8) instead of uniformly from
1..n // 2: it still averages a quarter of the text and varies, but never masks a single character or half the
text."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(max(1, n // 8 + 1), max(1, 3 * n // 8))
    start = rng.randint(0, n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
