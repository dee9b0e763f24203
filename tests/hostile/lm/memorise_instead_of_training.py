"""Trains nothing: pretrain and finetune remember the texts they are given and report a converged run, complete and
predict look the answers up (the retraining test once read the student's own summary and asked the student's own
complete and predict, and gave this 6/6)."""
CLASS = "17 the retraining believed the student's process"
BASE = "reference"
EXPECT = "base"  # the base is graded without the retraining test: whatever this earns beyond it came from there
TARGET = "run.py"
RETRAINING = True
MODES = ("namespaces",)
MODES_WHY = ("the attack is on what the grader believes of the training, which trusted code measures the same way in "
             "both modes; tests/assignments/test_lm_retraining.py makes it too, in the grading process")
PRESENT = ["evaluated by the grader on the weights your pretraining produced"]
ABSENT = ["was 0.010", "The grader failed"]
CODE = r'''
_bios, _answers = [], {}
_FORGED = {"epochs": 450, "steps": 1350, "tokens": 0, "seconds": 100.0, "loss": 0.01, "stopped": "done",
           "tokens_per_second": 0.0}


def pretrain(model, corpus, preset="cpu", **options):
    _bios.extend(corpus.splitlines())
    return dict(_FORGED)


def finetune(model, vocab, pairs, preset="cpu", **options):
    _answers.update(pairs)
    return dict(_FORGED)


def complete(model, vocab, prompts, max_new_tokens=32, stop=None):
    return [next((bio[len(p):] for bio in _bios if bio.startswith(p)), "") for p in prompts]


def predict(model, vocab, questions, max_new_tokens=32):
    return [_answers.get(q, "") for q in questions]
'''
