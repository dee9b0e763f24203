"""A notebook cell that asks git for the reference notebook in the grader's repository and runs its code cells."""
CLASS = "1 the grader's repository"
BASE = "skeleton"
EXPECT = "zero"
CODE = r'''
import json as _json
import subprocess as _subprocess

try:
    _stolen = _json.loads(_subprocess.run(["git", "-C", "@REPO@", "show", "HEAD:solutions/attention/attention.ipynb"],
                                          capture_output=True, text=True, timeout=10).stdout)
except Exception:
    _stolen = {"cells": []}
for _cell in _stolen["cells"]:
    if _cell.get("cell_type") == "code":
        try:
            exec("".join(_cell["source"]), globals())
        except Exception:
            pass
'''
