"""Fixtures for the positions suite (the harness's own fixtures come from autograder.grading.plugin)."""

import pytest


@pytest.fixture
def positions(student):
    """The student's positions module, as a remote proxy."""
    return student.positions


@pytest.fixture
def notebook(student):
    """The code of the student's positions.ipynb, run as a module, as a remote proxy."""
    return student.positions_notebook
