"""Hands in a 6 MB code file (within the size a code file may have: the reference, then a million short lines), to
take the runner's static check past its memory: a syntax tree takes hundreds of times its code, and the runner (uid 0)
reached 1.83 GB in ``ast.parse`` (issue 41). A file past what the check parses is not parsed: the check fails closed,
saying why. Trusted code alone reads the file before the worker starts, the same in either mode."""
CLASS = "13 memory of trusted processes"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["KB of code, more than the 512 KB the grader reads to check it"]
FILES = {"masking.py": {"append": "x = 1\n", "times": 1_048_576}}
MODES = ("namespaces",)
MODES_WHY = "the static check runs in the runner, before any worker, the same in either mode"
