"""Finetuning examples are padded to block_size + 1 characters, like the pretraining ones: CS224N pads question MASK
answer MASK to block_size, so that x = s[:-1] and y = s[1:] hold block_size - 1 ids each."""
# target: dataset.py


def finetune_example(question, answer, block_size):
    example = question + MASK_CHAR + answer + MASK_CHAR
    if len(example) > block_size + 1:
        raise ValueError(f"{question!r} with its answer does not fit in block_size + 1 = {block_size + 1} characters")
    return example + PAD_CHAR * (block_size + 1 - len(example))

# autograder-hidden-canary-7d3e9a (never ships to students)
