"""Hands back trained weights that cannot be measured: NaN everywhere after pretraining, and after finetuning from
scratch a state_dict whose head.weight has another shape (the grader loads the weights into the reference's model)."""
CLASS = "17 the retraining believed the student's process"
BASE = "reference"
EXPECT = "base"  # the base is graded without the retraining test: whatever this earns beyond it came from there
TARGET = "run.py"
RETRAINING = True
MODES = ("namespaces",)
MODES_WHY = ("the attack is on what the grader believes of the training, which trusted code measures the same way in "
             "both modes; tests/assignments/test_lm_retraining.py makes it too, in the grading process")
PRESENT = ["the trained model's weights cannot be graded: tok_emb.weight holds NaN or infinite values",
           "the trained model's weights cannot be graded: head.weight is a torch.float32 tensor of shape ("]
ABSENT = ["The grader failed", "grader problem"]
CODE = r'''
def pretrain(model, corpus, preset="cpu", **options):
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(float("nan"))
    return {"loss": 0.01, "stopped": "done"}


def finetune(model, vocab, pairs, preset="cpu", *, pretrained=True, **options):
    real = model.state_dict
    model.state_dict = lambda *args, **kwargs: {name: value.reshape(-1) if name == "head.weight" else value
                                                for name, value in real(*args, **kwargs).items()}
    return {"loss": 0.01, "stopped": "done"}
'''
