"""Searches for the other submissions of the batch (their sources, their staged copies, other workers' folders)
and raises what it finds, so that another student's code lands in its own feedback."""
CLASS = "2 other workers' copies"
BASE = "reference"
EXPECT = "below"
CODE = r'''
import os as _os
import time as _time


def _snoop() -> str:
    found, deadline = [], _time.monotonic() + 5
    for top in ("/tmp", "/var/tmp", "/proc", "/"):
        for dirpath, dirnames, filenames in _os.walk(top, followlinks=False):
            if _time.monotonic() > deadline:
                return " | ".join(found) or "nothing found"
            dirnames[:] = [d for d in dirnames if d not in ("sys", "usr", "site-packages", "task", "net")]
            for name in filenames:
                if name.endswith((".py", ".ipynb", ".json", ".md")):
                    try:
                        with open(_os.path.join(dirpath, name), errors="replace") as handle:
                            text = handle.read(200_000)
                    except OSError:
                        continue
                    if "hostile-marker-" in text and "@MARKER@" not in text:
                        found.append(f"{dirpath}/{name}: {text[:500]}")
    return " | ".join(found) or "nothing found"


def causal_mask(T, device=None):
    raise RuntimeError(_snoop())
'''
