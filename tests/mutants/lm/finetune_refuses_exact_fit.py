"""finetune_example refuses an example of exactly block_size characters (len >= block_size instead of >): a
question and answer that fit with no pad are rejected."""
# target: dataset.py
# unnamed: caught by the error it raises where none is due, not by an output


def finetune_example(question, answer, block_size):
    example = question + MASK_CHAR + answer + MASK_CHAR
    if len(example) >= block_size:
        raise ValueError(f"{question!r} with its answer needs {len(example)} characters: use a larger block_size")
    return example + PAD_CHAR * (block_size - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
