"""A submission folder whose files are links into the grader's checkout: masking.py to the reference, and a
positions.py that would make the folder look like a positions submission if links were followed."""
CLASS = "8 links and messages"
BASE = "skeleton"
EXPECT = "zero"
FILES = {"masking.py": {"link": "@REPO@/solutions/masking/masking.py"},
         "positions.py": {"link": "@REPO@/solutions/positions/positions.py"}}
