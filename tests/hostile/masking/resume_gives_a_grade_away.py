"""Mallory's copy of Alice's files, in an export that does not hold Alice, given to `grade --resume` over Alice's
grade: matched by content, Alice's result was renamed to Mallory (Alice's row gone, Mallory's Alice's grade, Mallory
never graded)."""
CLASS = "16 forged identity"
BASE = "reference"
EXPECT = "full"
HANDED_IN = {"submission_4101": "folder"}
BESIDE = {"submission_metadata.yml": "submission_4101:\n  :submitters:\n  - :name: Alice Honest\n    :sid: '4101'\n"}
RESUMED = {"handed_in": {"submission_4102": "folder"},
           "beside": {"submission_metadata.yml": "submission_4102:\n  :submitters:\n  - :name: Mallory Copier\n"
                                                 "    :sid: '4102'\n"}}
ROWS = {"submission_4101": "Alice Honest", "submission_4102": "Mallory Copier"}
SAID = ["the files of another's (its verdict copied as theirs)"]
