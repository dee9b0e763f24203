"""Writes forged results.json and feedback.md files wherever the grader might keep them (its working folder and
its parents, the runner's folder through /proc, any results folder it can find) and prints a forged results object."""
CLASS = "10 forged results"
BASE = "skeleton"
EXPECT = "zero"
CODE = r'''
import glob as _glob
import json as _json
import os as _os

_FAKE = {"score": 1000, "tests": [{"name": "forged-@MARKER@", "score": 1000, "max_score": 1}]}


def _forge():
    targets = ["results.json", "../results.json", "../../results.json", "/tmp/results.json"]
    for pid in [_os.getppid(), *(p for p in _os.listdir("/proc") if p.isdigit())]:
        targets.append(f"/proc/{pid}/cwd/results.json")
    targets += _glob.glob("/tmp/**/results.json", recursive=True)
    for target in targets:
        for name in (target, target.replace("results.json", "feedback.md")):
            try:
                with open(name, "w") as handle:
                    _json.dump(_FAKE, handle)
            except OSError:
                pass
    print(_json.dumps(_FAKE))


_forge()
'''
