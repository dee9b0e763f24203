"""Forks at import until the process limit refuses, leaving hundreds of sleeping children behind."""
CLASS = "7 stopping and crashing"
BASE = "reference"
EXPECT = "full"
CODE = r'''
import os as _os
import time as _time

for _ in range(5000):
    try:
        if _os.fork() == 0:
            _time.sleep(600)
            _os._exit(0)
    except OSError:
        break
'''
