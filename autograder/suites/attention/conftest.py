"""Fixtures for the attention suite (the harness's own fixtures come from autograder.plugin).

The grader's Monte Carlo and the reference notebook (run once per known mistake, for fingerprints) are
many tiny tensor operations: one thread runs them faster than several and leaves the other cores to
parallel gradings, so the grading process uses one, like the student's worker.
"""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture
def attention(student):
    """The student's notebook, run as the module ``attention``, as a remote proxy."""
    return student.attention
