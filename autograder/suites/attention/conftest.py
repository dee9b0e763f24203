"""Fixtures for the attention suite (the harness's own fixtures come from autograder.grading.plugin)."""

import pytest


@pytest.fixture
def attention(student):
    """The student's notebook, run as the module ``attention``, as a remote proxy."""
    return student.attention
