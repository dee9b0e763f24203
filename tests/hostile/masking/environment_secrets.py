"""Reads the term's secret seed wherever it might be: its own environment, the environment of every process it can
see, and the grader's files, and raises it if found."""
CLASS = "9 environment and network"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import os as _os

_causal_mask = causal_mask


def _secrets() -> list[str]:
    found = [f"{k}={v}" for k, v in _os.environ.items() if "SECRET" in k]
    for pid in _os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    found += [item.decode(errors="replace") for item in handle.read().split(bytes(1))
                              if b"SECRET" in item]
            except OSError:
                pass
    for path in ("@REPO@/autograder/suites/masking/hidden/SECRET", "/autograder/source/autograder/suites/masking/hidden/SECRET"):
        try:
            with open(path) as handle:
                found.append(handle.read())
        except OSError:
            pass
    return found


def causal_mask(T, device=None):
    found = _secrets()
    if found:
        raise RuntimeError(f"secrets: {found}")
    return _causal_mask(T, device)
'''
