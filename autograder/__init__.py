"""Transformer assignments and the sandboxed grader that scores them.

The grader's processes fork warm workers and runners (``autograder.forking``), which is safe only while they run one
thread: OpenBLAS (numpy's) would start a pool of its own at import, so it is kept to one thread here, before numpy
can be imported. Student code does its heavy work with torch, whose threads are set per worker.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
