"""The predictions route: ``*.predictions`` files handed in with the submission, scored against the hidden labels.

Rule (documented for students in the handout's README): every ``*.predictions`` file at the top of the
submission is a set of answers to ``data/birth_test_inputs.tsv``, one line per question. Each file earns its share
of the points in two parts: one answer per question (a third), and exact match on the hidden labels clearly above
the majority baseline ("always the commonest birthplace of birth_places_train.tsv"), i.e. at least the baseline's
accuracy plus two binomial standard errors (two thirds). A submission without predictions files scores 0 of the
same points, with what to hand in: the maximum is the assignment's, whatever a submission holds. The reference hands
in the test answers themselves (solutions/lm/reference.test.predictions, what a model that learned every fact would
answer): a model trained on a CPU does not reach the gate. The files are read in the trusted parent as text,
never through a link and never unpickled; the worker has used the same folder, so they are untrusted bytes.
"""

from pathlib import Path

from autograder import course
from autograder.grading import graded
from autograder.suites.lm import common
from autograder.suites.lm.birthplaces import exact_match, majority_answer, read_pairs

HIDDEN = Path(__file__).parent
COMMAND = ("python run.py evaluate vanilla data/wiki.txt --reading_params_path vanilla.finetune.params "
           "--eval_corpus_path data/birth_test_inputs.tsv --outputs_path vanilla.test.predictions")


@graded(points=3, tags=["predictions"])
def test_predictions_files(student, parts):
    """Predictions files: exact match on the hidden test labels, clearly above the majority baseline"""
    root = student.root
    files = sorted(p for p in root.glob("*.predictions")) if root is not None else []
    assert files, (f"No *.predictions file was handed in, so these points are zero. Write one with `{COMMAND}` "
                   "(after pretraining and finetuning) and hand it in with your code: "
                   "`autograder zip lm FOLDER vanilla.test.predictions`.")
    labels = [answer for _, answer in read_pairs(HIDDEN / "birth_test_labels.tsv")]
    train = course.load("lm").solution_dir / "data" / "birth_places_train.tsv"
    baseline = majority_answer([answer for _, answer in read_pairs(train)])
    needed = common.baseline_threshold(labels, baseline)
    for path in files:
        answers = None
        with parts(f"{path.name}: one answer per question"):
            answers = common.read_plain_text(path).splitlines()
            assert len(answers) == len(labels), (
                f"{path.name} has {len(answers)} lines for the {len(labels)} questions of data/birth_test_inputs.tsv; "
                f"write one answer per question, in order, with `{COMMAND}`")
        with parts(f"{path.name}: exact match above the majority baseline", 2):
            assert answers is not None and len(answers) == len(labels), f"{path.name} cannot be scored (see above)"
            correct, total = exact_match(answers, labels)
            parts.figure(f"{path.name} exact match", correct / total, at_least=needed)
            assert correct / total >= needed, (
                f"{path.name}: {correct} of {total} correct ({correct / total:.1%}); it needs {needed:.1%}, clearly "
                f"above always answering {baseline!r} ({sum(a == baseline for a in labels) / total:.1%})")

# autograder-hidden-canary-7d3e9a (never ships to students)
