"""Starting, confining and stopping the worker processes that run student code, on the grader's side: the limits a
worker gets (``config``), how workers are isolated here (``isolation``: namespaces, Landlock, seccomp, found by a
probe), one worker's life (``process``: the ``Sandbox``), its printed output (``capture``), the reaping of what workers
leave (``reaping``), the workers' zygote of a grading process (``zygote``, warm starts), a uid of its own per worker
(``permissions``), control groups (``cgroups``), what a worker writes to disk (``diskwatch``) and its memory, watched
from outside where the kernel does not bound it (``memorywatch``).

It may import the shared modules at the top of ``autograder`` (``forking``, ``protocol``, ``scratch``), never
``course`` or anything above it, nor ``autograder.worker``: the worker is started by name (``-m
autograder.worker``) and confines itself there (``autograder.worker.confine``).
"""
