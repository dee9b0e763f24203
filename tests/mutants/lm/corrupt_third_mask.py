"""corrupt closes the masked span with a third MASK_CHAR (prefix + MASK + suffix + MASK + span + MASK): the layout
has two, one where the span was cut out and one before the span is repeated; the pads follow the span directly."""
# target: dataset.py
# unnamed: graded by the span-corruption rules on its examples, not against the reference's values
# seen in: public CS224N a5 student repositories (a mask character appended after the masked content)


def corrupt(document, block_size, rng):
    text = document[:rng.randint(4, int(7 / 8 * block_size))]
    n = len(text)
    span = rng.randint(1, max(1, n // 2))
    start = rng.randint(0, n - span)
    prefix, masked, suffix = text[:start], text[start:start + span], text[start + span:]
    example = prefix + MASK_CHAR + suffix + MASK_CHAR + masked + MASK_CHAR
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
