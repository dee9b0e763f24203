"""One student's folder of an export holding two submissions (submission_7001/v1/, v2/): two gradebook rows for one
student (the zip of the same layout was refused, the folder was not)."""
CLASS = "16 forged identity"
BASE = "skeleton"
EXPECT = "zero"
CODE = 'raise ImportError("this submission does not load: grading it is quick")\n'
HANDED_IN = {"submission_7001/v1": "folder", "submission_7001/v2": "folder"}
BESIDE = {"submission_metadata.yml": "submission_7001:\n  :submitters:\n  - :name: Alice Honest\n    :sid: '7001'\n"}
ROWS = {"submission_7001": "Alice Honest"}
PRESENT = ["holds the files of 2 submissions (v1/, v2/): it is one student's folder of a Gradescope export"]
