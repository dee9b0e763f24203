"""Transformer assignments and the sandboxed grader that scores them.

The package by role (docs/architecture.md): the untrusted side (``worker``); starting and confining workers
(``sandbox``); grading one submission (``grading``) with each assignment's tests (``suites``); grading many
(``batch``); the class report (``report``); writing assignments (``authoring``). Above them the commands (``cli``,
and ``instructor`` for course staff), Gradescope's driver (``gradescope``), its metadata (``gradescope_metadata``:
who made a submission, what students may see now; below ``batch``, which names the students in its gradebooks) and
its container's sizes and measured settings (``container``), the student's hand-in zip (``handin``) and a submission
made ready to grade (``submission``), the course's assignments (``course``); below them the leaves every layer shares:
``results``, ``protocol``, ``calls``, ``notebook_cells``, ``forking``, ``scratch``, ``sinks``, ``trees``, ``ceilings``
and ``grading_options`` (one record of how a submission is graded).

The grader's processes fork warm workers and runners (``autograder.forking``), which is safe only while they run one
thread: OpenBLAS (numpy's) would start a pool of its own at import, so it is kept to one thread here, before numpy
can be imported. Student code does its heavy work with torch, whose threads are set per worker.
"""

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
