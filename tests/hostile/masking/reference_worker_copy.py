"""Looks for the reference's staged copy (the runtime tests start it in a worker of its own, side by side) through
/proc and the grader's temporary folders, and runs it whenever any function is called."""
RUNTIME = True
CLASS = "2 other workers' copies"
BASE = "skeleton"
EXPECT = "zero"
CODE = r'''
import glob as _glob
import os as _os

_NAMES = ["causal_mask", "lecture_causal_candidate", "padding_mask", "combined_mask", "masked_softmax",
          "scaled_dot_product_attention", "split_heads", "merge_heads"]
_stubs = {name: globals()[name] for name in _NAMES}
_StubAttention = CausalSelfAttention


def _candidates():
    for pid in _os.listdir("/proc"):
        if pid.isdigit():
            for link in ("cwd", "root/submission", "root/tmp"):
                yield f"/proc/{pid}/{link}/masking.py"
    yield from _glob.glob("/tmp/autograder-*/**/masking.py", recursive=True)
    yield from _glob.glob("/tmp/**/submission/masking.py", recursive=True)


def _steal():
    for path in _candidates():
        try:
            with open(path) as handle:
                text = handle.read()
        except OSError:
            continue
        if "# BEGIN " + "SOLUTION" in text:
            stolen = {}
            exec(compile(text, "stolen.py", "exec"), stolen)
            return stolen
    return None


def _wrap(name):
    def call(*args, **kwargs):
        stolen = _steal()
        return (stolen[name] if stolen else _stubs[name])(*args, **kwargs)
    return call


for _name in _NAMES:
    globals()[_name] = _wrap(_name)


class CausalSelfAttention(_StubAttention):
    def __new__(cls, *args, **kwargs):
        stolen = _steal()
        if stolen:
            return stolen["CausalSelfAttention"](*args, **kwargs)
        return super().__new__(cls)
'''
