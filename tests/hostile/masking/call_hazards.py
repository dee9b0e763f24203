"""causal_mask misbehaves on its first four calls, once each (a file in its folder counts them across restarts):
it returns a list, calls sys.exit, calls os._exit, loops forever; each costs only its own check."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "below"
PRESENT = ["expected a torch.Tensor, but your code returned a list", "sys.exit(0)", "exited with status 0",
           "did not finish within the test's time limit of 15 s"]
CODE = r'''
import os
import sys

_causal_mask = causal_mask


def _count() -> int:
    try:
        with open("calls.txt") as handle:
            count = int(handle.read() or 0)
    except OSError:
        count = 0
    with open("calls.txt", "w") as handle:
        handle.write(str(count + 1))
    return count


def causal_mask(T, device=None):
    call = _count()
    if call == 0:
        return [[True]]
    if call == 1:
        sys.exit(0)
    if call == 2:
        os._exit(0)
    if call == 3:
        while True:
            pass
    return _causal_mask(T, device)
'''
