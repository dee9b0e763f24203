"""For the people who write assignments: building skeletons and expected values from ``solutions/`` (``build``,
with the solution markers it reads: ``markers``), notebooks with Otter Assign (``notebooks``), the leak scan
(``leaks``), the student and Gradescope zips (``dist``), Gradescope's container simulated for a zip
(``simulation``), ``autograder new`` (``scaffold``), and the evidence that a suite grades correctly (``validate``):
the correct alternatives it grades (``alternatives``), the spec rules its docstrings state and the checks that
observe them (``rules``), and mutation testing over ``solutions/`` (``mutation_testing``, with its tensor-aware
operators: ``mutations``). Their commands live in ``autograder.instructor``.

It may import every layer below it (``gradescope``, ``batch``, ``grading``, ``sandbox``, the shared modules); no
student command imports it.
"""
