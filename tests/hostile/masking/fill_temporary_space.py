"""Fills /tmp and /dev/shm with files (60 MB each, under the file-size limit) until the space runs out or 300 MB
each are written; none of it may outlive the grading."""
CLASS = "3 shared temporary space"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import os as _os


def _fill():
    block = b"x" * (1 << 20)
    for folder in ("/tmp", "/dev/shm"):
        for index in range(5):
            try:
                with open(f"{folder}/hostile-fill-{_os.getpid()}-{index}", "wb") as handle:
                    for _ in range(60):
                        handle.write(block)
            except OSError:
                break


_fill()
'''
