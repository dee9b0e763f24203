"""padding_mask blows up memory, forks until refused, or floods its output, depending on the size it is asked for;
the fork and flood parts still answer correctly."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "below"
PRESENT = ["memory", "output truncated"]
CODE = r'''
import os
import time

_padding_mask = padding_mask


def padding_mask(lengths, T):
    if T == 6:
        hoard = []
        while True:
            hoard.append(torch.ones(50_000_000))
    if T == 5:
        for _ in range(3000):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(120)
                os._exit(0)
    if T == 2:
        for _ in range(400_000):
            print("flood " * 40)
    return _padding_mask(lengths, T)
'''
