"""Fills its own folder (on the grader's disk) with 60 MB files, under the file-size limit, until 1.2 GB are written
or the writes are refused: the disk watch stops it at its tmp_mb, and the student is told why."""
CLASS = "3 shared temporary space"
BASE = "reference"
EXPECT = "zero"
PRESENT = ["stopped for writing more than 256 MB to disk"]
CODE = r'''
import time as _time


def _fill():
    block = b"x" * (1 << 20)
    for index in range(20):
        with open(f"hostile-fill-{index}", "wb") as handle:
            for _ in range(60):
                handle.write(block)
        _time.sleep(0.05)


_fill()
'''
