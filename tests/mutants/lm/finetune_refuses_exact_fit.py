"""finetune_example refuses an example of exactly block_size characters (>= instead of >): it fits, with no pads."""
# target: dataset.py
# unnamed: it raises where the reference returns, so there is no output to match


def finetune_example(question, answer, block_size):
    example = question + MASK_CHAR + answer + MASK_CHAR
    if len(example) >= block_size:
        raise ValueError(f"{question!r} does not fit block_size = {block_size}")
    return example + PAD_CHAR * (block_size - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
