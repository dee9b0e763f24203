"""GPT.generate calls self.eval() itself and leaves the model in eval mode: a caller that generates a sample in
the middle of training goes on training without dropout. The docstring says generate does not change the training
mode (the caller calls model.eval() first)."""
# target: model.py
# unnamed: its ids are right; only the training mode it leaves behind is wrong

_generate_keeping_mode = GPT.generate


def _generate_switching_to_eval(self, idx, max_new_tokens, **options):
    self.eval()
    return _generate_keeping_mode(self, idx, max_new_tokens, **options)


GPT.generate = _generate_switching_to_eval

# autograder-hidden-canary-7d3e9a (never ships to students)
