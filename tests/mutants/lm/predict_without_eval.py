"""predict leaves the model in training mode (no model.eval()), so dropout changes the answers."""
# target: run.py
# unnamed: its answers are random (dropout left on): no recorded value can match them


def predict(model, vocab, questions, max_new_tokens=32):
    completions = complete(model, vocab, [question + MASK_CHAR for question in questions], max_new_tokens,
                           stop=MASK_CHAR)
    return [completion.split(MASK_CHAR, 1)[0] for completion in completions]

# autograder-hidden-canary-7d3e9a (never ships to students)
