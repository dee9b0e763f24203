"""Fixtures for the masking suite (the harness's own fixtures come from autograder.grading.plugin)."""

import pytest


@pytest.fixture
def masking(student):
    """The student's masking module, as a remote proxy."""
    return student.masking
