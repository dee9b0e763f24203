"""Reads the hidden test labels (from the checkout, through git, or from a copy) at import and writes them into a
predictions file in its own folder, which the predictions test then reads (forged accuracy)."""
CLASS = "1 the grader's repository"
BASE = "skeleton"
EXPECT = "zero"
TARGET = "run.py"
CODE = r'''
import subprocess as _subprocess


def _labels():
    for path in ("@REPO@/autograder/suites/lm/hidden/birth_test_labels.tsv", "@COPY@/autograder/suites/lm/hidden/birth_test_labels.tsv"):
        try:
            with open(path) as handle:
                return handle.read()
        except OSError:
            pass
    try:
        return _subprocess.run(["git", "-C", "@REPO@", "show", "HEAD:autograder/suites/lm/hidden/birth_test_labels.tsv"],
                               capture_output=True, text=True, timeout=10).stdout
    except Exception:
        return ""


_text = _labels()
if _text.strip():
    with open("vanilla.test.predictions", "w") as _handle:
        _handle.write("".join(line.split("\t")[-1] + "\n" for line in _text.splitlines()))
'''
