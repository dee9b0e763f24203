"""An export whose submission_metadata.yml names its student with an alias bomb ("billion laughs": ten lines of nested
aliases stand for a billion strings): the command ended with MemoryError at 2.8 GB as it wrote the per-assignment
gradebooks (str() of the name), after every grading: no gradebook-<assignment>.csv and no report."""
CLASS = "13 memory of trusted processes"
BASE = "skeleton"
EXPECT = "zero"
CODE = 'raise ImportError("this submission does not load: grading it is quick")\n'
HANDED_IN = {"submission_6101": "folder"}
BESIDE = {"submission_metadata.yml": (
    'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    'a1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\n'
    'a2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\n'
    'a3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\n'
    'a4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\n'
    'a5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]\n'
    'a6: &a6 [*a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5, *a5]\n'
    'a7: &a7 [*a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6, *a6]\n'
    'a8: &a8 [*a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7, *a7]\n'
    'a9: &a9 [*a8, *a8, *a8, *a8, *a8, *a8, *a8, *a8, *a8]\n'
    'submission_6101:\n'
    '  :submitters:\n'
    '  - :name: *a9\n'
    "    :sid: '6101'\n"
    )}
ROWS = {"submission_6101": ""}
SAID = ["ignoring Gradescope's metadata", "its aliases expand it past 32 MB", "the gradebooks name no student"]
