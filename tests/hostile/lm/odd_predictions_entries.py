"""Hands in a folder named like a predictions file, and makes a pipe of that kind at import (the grader once reported
an IsADirectoryError, then an UnboundLocalError, as its own problem)."""
CLASS = "8 links and messages"
BASE = "skeleton"
EXPECT = "zero"
FILES = {"folder.test.predictions/answers.txt": "Ulm\n"}
CODE = r'''
import os as _os

try:
    _os.mkfifo("pipe.test.predictions")
except OSError:
    pass
'''
PRESENT = ["folder.test.predictions is a folder: hand in the text file", "pipe.test.predictions is not a plain file"]
ABSENT = ["IsADirectoryError", "UnboundLocalError", "The grader failed"]
