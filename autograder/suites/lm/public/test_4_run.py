"""run.py: the training configurations, predictions and exact match (majority_baseline is given code, so it earns
no points)."""

import torch

from autograder.grading import assert_close, graded, read
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape
from autograder.suites.positions.common import assert_raises_value_error

QUESTIONS = ["Where was Ada born?", "Where was Bo born?", "Where was Cy Li born?"]
TEXT = "".join(f"{q}\tAl Ulm\n" for q in QUESTIONS)


def _predict(impl, state, shape):
    vocab = impl.dataset.Vocabulary(TEXT)
    model = common.gpt(impl, shape, "vanilla", state, dropout=0.5, train=True)
    return impl.run.predict(model, vocab, QUESTIONS, max_new_tokens=6), read(model, "training")


@graded(points=2, covers=["predict", "GPT.generate", "GPT"], builds_on=["masking", "positions"])
def test_predict(student, oracle, parts):
    """predict: greedy answers in eval mode match the reference (the model had dropout and was in training mode)"""
    shape = Shape(vocab_size=len(set(TEXT)) + 2, block_size=32, n_layer=1)
    state = common.gpt_state(shape, "vanilla", seed=110, dtype=torch.float64)
    got, expected = _predict(student, state, shape), oracle(lambda impl: _predict(impl, state, shape))
    with parts("the answers", 2):
        assert isinstance(got[0], list) and got[0] == expected.value[0], (
            f"predict gave {got[0]!r}, expected {expected.value[0]!r}: complete each question + MASK greedily in eval "
            "mode and keep what comes before the next MASK")
    with parts("eval mode"):
        assert got[1] is False, "after predict the model is still in training mode: call model.eval() first"


@graded(points=1, covers=["exact_match"])
def test_exact_match(student, parts):
    """exact_match: counts answers equal to their label (case counts), ignoring surrounding spaces"""
    with parts("plain"):
        got = student.run.exact_match(["Ulm", "Paris", "Rome"], ["Ulm", "Rome", "Rome"])
        assert tuple(got) == (2, 3), f"exact_match gave {got!r}, expected (2, 3)"
    with parts("surrounding spaces"):
        got = student.run.exact_match([" Ulm", "New Lake \n", "Rome"], ["Ulm ", "New Lake", "Rom"])
        assert tuple(got) == (2, 3), (f"exact_match gave {got!r} for answers with surrounding spaces, expected (2, 3): "
                                      "strip() both sides before comparing")
    with parts("case counts"):
        got = student.run.exact_match(["ulm", "Paris"], ["Ulm", "Paris"])
        assert tuple(got) == (1, 2), (f"exact_match gave {got!r} for ['ulm', 'Paris'] against ['Ulm', 'Paris'], "
                                      "expected (1, 2): an answer is exact only with the label's case")
    with parts("no predictions"):
        got = student.run.exact_match([], [])
        assert tuple(got) == (0, 0), f"exact_match([], []) gave {got!r}, expected (0, 0)"
    with parts("lists of different lengths"):
        assert_raises_value_error(lambda: student.run.exact_match(["Ulm"], ["Ulm", "Rome"]),
                                  "exact_match(['Ulm'], ['Ulm', 'Rome'])",
                                  "a prediction is missing, so the score would count a shorter test set")



# CS224N's run.py with the real wiki.txt: its CharCorruptionDataset holds 2937 documents (the non-empty lines).
DOCUMENTS = 2937
FIELDS = ("max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens", "num_workers")
CALLS = [("pretraining", f"pretrain_config('gpu', {DOCUMENTS})"),
         ("finetuning after pretraining", f"finetune_config('gpu', {DOCUMENTS}, pretrained=True)"),
         ("finetuning from scratch", f"finetune_config('gpu', {DOCUMENTS}, pretrained=False)"),
         # lr and the options, which no call above sets: each must win over the preset's value
         ("pretraining with lr and options", "pretrain_config('cpu', 100, lr=3e-4, max_epochs=2, batch_size=7)"),
         ("finetuning with lr and options",
          "finetune_config('cpu', 100, True, lr=1e-4, max_epochs=3, warmup_tokens=5)")]


@graded(points=2, covers=["pretrain_config", "finetune_config"])
def test_recipe_configs(student, oracle, parts):
    """pretrain_config and finetune_config: the gpu preset is CS224N's recipe, decaying over the corpus's documents"""

    def configs(impl):
        made = [impl.run.pretrain_config("gpu", DOCUMENTS), impl.run.finetune_config("gpu", DOCUMENTS, True),
                impl.run.finetune_config("gpu", DOCUMENTS, False),
                impl.run.pretrain_config("cpu", 100, lr=3e-4, max_epochs=2, batch_size=7),
                impl.run.finetune_config("cpu", 100, True, lr=1e-4, max_epochs=3, warmup_tokens=5)]
        return [{field: read(config, field) for field in FIELDS} for config in made]

    got, expected = configs(student), oracle(configs)
    for index, (part, call) in enumerate(CALLS):
        with parts(part):
            assert_close(got[index], expected[index], f"{call}'s fields (final_tokens = 200 * documents * block_size "
                         "as in CS224N, documents counting the pretraining corpus for finetuning too)")
