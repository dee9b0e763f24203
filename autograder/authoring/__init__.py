"""For the people who write assignments: building skeletons and expected values from ``solutions/`` (``build``),
notebooks with Otter Assign (``notebooks``), the leak scan (``leaks``), the student and Gradescope zips (``dist``),
``autograder new`` (``scaffold``), the evidence that a suite grades correctly (``validate``), the correct
alternatives it grades (``alternatives``), and their commands
(``commands``).

It may import every layer below it (``gradescope``, ``batch``, ``grading``, ``sandbox``, the shared modules); no
student command imports it.
"""
