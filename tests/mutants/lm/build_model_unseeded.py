"""build_model does not seed torch before building the model: two calls with the same seed give different weights."""
# target: run.py
# unnamed: only the reproducibility of its weights is checked, not a value to match


def build_model(variant, vocab_size, preset="cpu", seed=0):
    shape = get_preset(preset)
    return GPT(GPTConfig(vocab_size=vocab_size, block_size=shape.block_size, n_layer=shape.n_layer,
                         n_head=shape.n_head, n_embd=shape.n_embd, dropout=shape.dropout, variant=variant))

# autograder-hidden-canary-7d3e9a (never ships to students)
