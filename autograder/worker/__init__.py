"""The student side: the process that imports a submission and answers the grader's calls.

``python -m autograder.worker`` is started by ``autograder.sandbox`` for one submission. Its first message (on
the requests pipe, never on the command line or in the environment) is the spec: the modules to import, the
forbidden routines and the confinement plan. It confines itself (``confine``) before it imports torch or any
student file, sets the forbidden-routine traps (``traps``), then serves calls (``serve``) until the pipe closes.

Nothing here is trusted by the grader: every answer is validated in the parent, and scores are computed only
there. Trusted code never imports this package; what both sides need is in ``autograder.protocol``,
``autograder.calls`` and ``autograder.notebook_cells``.
"""
