"""Fixtures for the lm suite (the harness's own fixtures come from autograder.grading.plugin)."""

import pytest


@pytest.fixture
def dataset(student):
    """The student's dataset module, as a remote proxy."""
    return student.dataset
