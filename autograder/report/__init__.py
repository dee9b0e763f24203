"""For course staff, after a batch: the class report (``page``; the results folder's owner,
``autograder.batch.folder``, calls its writer), the similarity check beyond the starter code (``similarity``) and the
report's plots (``plots``). The ``autograder report`` command lives in ``autograder.instructor``.

It may import ``gradescope``, ``batch``, ``grading`` and the shared modules; no student command imports it.
"""
