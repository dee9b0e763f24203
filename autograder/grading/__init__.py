"""Grading one submission: the suite author's API (``api``, whose names this module re-exports), the runner that grades
a submission in its own process (``runner``), the pytest plugin that scores a suite (``plugin``), the student proxy
(``proxy``: remote calls into the sandboxed worker), the reference's expected values (``oracle``), loading trusted
implementations (``trusted_import``, ``mutants``), the static check of forbidden routines (``staticcheck``), runtime
and memory (``timing``; the memory a call holds, sampled from outside: ``samplers``), a submitted notebook read as
data (``answers``), the in-kernel ``grader.check`` (``notebook_checks``) and the experiments that confirm a known
mistake before it is named (``naming``: a suite's probes are its ``Probe``s).

A suite imports what it needs from ``autograder.grading`` alone (and its assignment's own helpers). This package may
import ``autograder.sandbox`` and the shared modules at the top of ``autograder``, never ``batch``, ``report``,
``authoring`` or ``autograder.worker`` (``notebook_checks`` excepted: it runs in the student's own kernel, where
nothing is trusted); the contracts in pyproject.toml check it.
"""

from autograder.grading.api import (
    FLOAT_TOLERANCE,
    Parts,
    assert_close,
    assert_rows_sum_to_one,
    assert_tensor,
    derive_seed,
    describe_type,
    forward_backward,
    graded,
    matched_mistakes,
    named_mistake,
    read,
    recognise,
    run_check,
    start_test,
    tolerance,
)
from autograder.grading.naming import Probe
from autograder.grading.oracle import Expected
from autograder.grading.proxy import RemoteAttr, RemoteObject, Student, StudentCodeFailure, StudentCrashed, StudentError

__all__ = ["FLOAT_TOLERANCE", "Expected", "Parts", "Probe", "RemoteAttr", "RemoteObject", "Student",
           "StudentCodeFailure", "StudentCrashed", "StudentError", "assert_close", "assert_rows_sum_to_one",
           "assert_tensor", "derive_seed", "describe_type", "forward_backward", "graded", "matched_mistakes",
           "named_mistake", "read", "recognise", "run_check", "start_test", "tolerance"]
