"""Skeleton generation from solution markers."""

import pytest

from autograder import course
from autograder.authoring.build import record_expected, recording_problems, skeleton_files
from autograder.authoring.markers import BuildError, strip_solutions
from autograder.grading.oracle import read_store, store_fingerprint, write_store

SOLUTION = '''import torch


def double(x):
    """(N,) -> (N,)"""
    # BEGIN SOLUTION multiply by two
    y = x * 2
    return y
    # END SOLUTION


class Box:
    def size(self):
        given = 1
        return given + 1  # SOLUTION: add one
'''


def test_regions_become_stubs_with_hints():
    skeleton = strip_solutions(SOLUTION, "demo.py")
    assert "x * 2" not in skeleton and "given + 1" not in skeleton
    assert "    raise NotImplementedError('double: multiply by two')" in skeleton
    assert "        raise NotImplementedError('Box.size: add one')" in skeleton
    assert '"""(N,) -> (N,)"""' in skeleton and "given = 1" in skeleton
    namespace: dict = {}
    exec(compile(skeleton, "demo.py", "exec"), namespace)
    with pytest.raises(NotImplementedError, match="double: multiply by two"):
        namespace["double"](1)


@pytest.mark.parametrize("source, message", [
    ("def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    pass\n    # END SOLUTION\n", "inside the region"),
    ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "never closed"),
    ("def f():\n    return 1\n    # END SOLUTION\n", "without a BEGIN"),
    ("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n", "inside a function"),
    ("def f(:\n", "does not parse"),
])
def test_bad_markers_are_reported_with_the_line(source, message):
    with pytest.raises(BuildError, match=message):
        strip_solutions(source, "bad.py")


@pytest.mark.parametrize("name", course.names())
def test_checked_in_skeletons_match_the_solutions(name):
    assignment = course.load(name)
    for relative, content in skeleton_files(assignment).items():
        path = assignment.skeleton_dir / relative
        assert path.read_bytes() == content, f"{path} is out of date: run `autograder build {name}`"


def test_recording_refuses_a_reference_that_fails_public_tests(monkeypatch, tmp_path):
    """A check the reference fails records nothing, so students could never pass it: the build says so."""
    masking = course.load("masking")
    monkeypatch.setattr(course.Assignment, "solution_dir", property(lambda self: self.skeleton_dir))
    monkeypatch.setattr(course.Assignment, "expected_file", property(lambda self: tmp_path / "expected.zip"))
    [problem] = record_expected(masking)
    assert "the reference fails public tests while recording" in problem
    assert "masked_softmax" in problem
    assert not (tmp_path / "expected.zip").exists()


def test_check_refuses_a_recording_of_other_sources(monkeypatch, tmp_path):
    """build --check compares the recording's fingerprint with the current sources' (a changed public test, mutant
    or reference means the recording is stale), and a missing recording is stale too."""
    masking = course.load("masking")
    assert recording_problems(masking) == []
    monkeypatch.setattr(course.Assignment, "recording_fingerprint", lambda self: "0" * 64)
    [problem] = recording_problems(masking)
    assert "out of date" in problem and "autograder build masking" in problem
    monkeypatch.setattr(course.Assignment, "expected_file", property(lambda self: tmp_path / "missing.zip"))
    assert recording_problems(masking)


def test_check_refuses_a_recording_that_lacks_naming_probes(monkeypatch, tmp_path):
    """A recording stopped by its time budget after the tests passed lacked the naming probes asked last (lm's, built
    beside other work): build --check says so, and names the first missing probe."""
    masking = course.load("masking")
    entries = {key: (value, variants) for key, (value, variants) in read_store(masking.expected_file).items()
               if "probes/causal_mask: T = 5#" not in key}
    assert len(entries) < len(read_store(masking.expected_file))
    write_store(tmp_path / "expected.zip", entries, store_fingerprint(masking.expected_file))
    monkeypatch.setattr(course.Assignment, "expected_file", property(lambda self: tmp_path / "expected.zip"))
    [problem] = recording_problems(masking)
    assert "lacks the values of 1 naming probes" in problem and "autograder build masking" in problem
