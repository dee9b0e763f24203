"""A notebook cell that reads the hidden tests, the solutions and the term's secret and raises them, so that they
appear among "the cells that raised errors" in the feedback."""
CLASS = "1 the grader's repository"
BASE = "reference"
EXPECT = "any"
TARGET = "positions.ipynb"
CODE = r'''
found = []
for path in ["@REPO@/autograder/suites/positions/hidden/test_hidden.py", "@REPO@/autograder/suites/positions/hidden/SECRET",
             "@REPO@/solutions/positions/positions.py", "@COPY@/solutions/positions/positions.py"]:
    try:
        found.append(open(path).read()[:3000])
    except OSError as exc:
        found.append(type(exc).__name__)
raise RuntimeError(" | ".join(found))
'''
