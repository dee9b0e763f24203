"""Handed in under the names of the batch's own files (gradebook.csv.zip, summary.md) and under names a file system
takes for one another (case, Unicode form, replaced characters): gradebook.csv.zip was graded into
out/gradebook.csv/, where the gradebook could then not be written (IsADirectoryError: no gradebook, summary or report
for anyone)."""
CLASS = "18 the batch's own files and names"
BASE = "skeleton"
EXPECT = "zero"
CODE = 'raise ImportError("this submission does not load: grading it is quick")\n'
HANDED_IN = {"gradebook.csv.zip": "zip", "GRADEBOOK.CSV": "folder", "summary.md": "folder", "caf\u00e9": "folder",
             "cafe\u0301.zip": "zip", "a:b": "folder", "a_b.zip": "zip"}
ROWS = {"GRADEBOOK_CSV": "", "a_b": "", "a_b-2": "", "caf\u00e9": "", "caf\u00e9-2": "", "gradebook_csv-2": "",
        "summary_md": ""}
