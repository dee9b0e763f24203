"""Asks git for the reference in the grader's own repository and runs it (the review's 55/55 through .git)."""
CLASS = "1 the grader's repository"
BASE = "skeleton"
EXPECT = "zero"
CODE = r'''
import subprocess as _subprocess

for _args in (["git", "-C", "@REPO@", "show", "HEAD:solutions/masking/masking.py"],
              ["git", "--git-dir", "@REPO@/.git", "--work-tree", "@REPO@", "show", "HEAD:solutions/masking/masking.py"]):
    try:
        _stolen = _subprocess.run(_args, capture_output=True, text=True, timeout=10).stdout
    except Exception:
        _stolen = ""
    if "def masked_softmax" in _stolen:
        exec(compile(_stolen, "stolen.py", "exec"), globals())
        break
'''
