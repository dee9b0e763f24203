"""The student side: the process that imports a submission and answers the grader's calls.

``python -m autograder.worker`` is started by ``autograder.sandbox`` for one submission. Its first message (on
the requests pipe, never on the command line or in the environment) is the spec: the modules to import, the
forbidden routines and the confinement plan. It confines itself (``confine``) before it imports torch or any
student file, sets the forbidden-routine traps (``traps``), then serves calls (``serve``) until the pipe closes. A warm
worker is forked from a zygote of its own (``zygote``).

Nothing here is trusted by the grader: every answer is validated in the parent, and scores are computed only
there. Trusted code never imports this package (the grading process forks its workers' zygote and only that fork
imports it, by name: ``autograder.sandbox.zygote``); the one exception, ``autograder.grading.notebook_checks``, runs in
the student's own Jupyter kernel, where nothing is trusted. This package imports only what both sides share:
``autograder.protocol``, ``autograder.calls``, ``autograder.notebook_cells`` and ``autograder.forking``. The import
contracts in pyproject.toml check both rules.
"""
