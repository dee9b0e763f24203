"""Replayed expectations (``autograder check``) give the verdicts live grading gives: a recorded value is looked up
by what a check asks, so a function a student has not written yet cannot shift the values later checks compare
with."""

from __future__ import annotations

import json
import shutil
import zipfile
from types import SimpleNamespace

import pytest
import torch

from autograder import course
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.grading import oracle as oracles
from autograder.grading.oracle import (
    Oracle,
    load_store,
    preload,
    question_of,
    read_store,
    store_fingerprint,
    write_store,
)
from autograder.grading.plugin import GradingPlugin
from autograder.grading.proxy import Student
from autograder.grading_options import GradingOptions
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation

UNWRITTEN = "\n\ndef {name}(*args, **kwargs):\n    raise NotImplementedError('{name}')\n"


def test_a_question_is_what_is_asked_not_when():
    x = torch.randn(2, 5, 12)
    lengths = [torch.tensor([3, 5, 1]), torch.tensor([0, 4])]
    split, merge = (lambda impl: impl.masking.split_heads(x, 3)), (lambda impl: impl.masking.merge_heads(x))
    asked = [question_of(lambda impl, lengths=n: impl.masking.combined_mask(lengths, 5)) for n in lengths]
    assert question_of(split) != question_of(merge) and asked[0] != asked[1]
    assert question_of(split) == question_of(split)
    again = torch.randn(2, 5, 12)  # another float input of the same shape: told apart by order, not by its bits
    assert question_of(lambda impl: impl.masking.merge_heads(again)) != question_of(merge)  # another line


def _with_unwritten(tmp_path, name: str, module: str, function: str):
    """The reference of ``name`` with ``function`` of ``module``.py raising NotImplementedError."""
    assignment = course.load(name)
    folder = tmp_path / f"{name}-without-{function}"
    folder.mkdir()
    for file in assignment.files:
        shutil.copy(assignment.solution_dir / file, folder / file)
        if file == f"{module}.py":
            (folder / file).write_text((folder / file).read_text() + UNWRITTEN.format(name=function))
    return discover([folder], name)[0]


@pytest.mark.parametrize("name, module, function", [
    ("masking", "masking", "split_heads"),  # merge_heads' check, after it in the same test, must still pass
    ("positions", "masking", "combined_mask"),  # the carried checks after it, masked_softmax's among them
])
def test_replay_agrees_with_live_grading_when_a_function_is_missing(tmp_path, name, module, function):
    job = _with_unwritten(tmp_path, name, module, function)
    verdicts = {}
    for oracle in ("live", "replay"):
        [results] = grade_all([job], tmp_path / oracle, GradingOptions(public_only=True, oracle=oracle),
                                   progress=False)
        verdicts[oracle] = {t.number: (t.score, t.output) for t in results.tests}
    assert verdicts["replay"] == verdicts["live"]
    assert any(score for score, _ in verdicts["replay"].values())


def test_a_rewritten_recording_is_read_again_not_served_from_the_cache(tmp_path):
    """Recordings are read once per process (the runners' zygote preloads them); one written since is read anew."""
    path = tmp_path / "expected.zip"
    write_store(path, {"q#1": (torch.tensor([1.0]), [])}, fingerprint="first")
    preload([path])
    assert store_fingerprint(path) == "first" and load_store(path)[0].keys() == {"q#1"}
    write_store(path, {"q#1": (torch.tensor([1.0]), []), "q#2": (torch.tensor([2.0]), [])}, fingerprint="second")
    assert store_fingerprint(path) == "second" and load_store(path)[0].keys() == {"q#1", "q#2"}
    assert read_store(path)["q#2"][0].item() == 2.0


def test_a_recording_writes_each_description_and_blob_once_and_refuses_other_versions(tmp_path):
    """Two checks that every mistake answers: each description is stored once, and equal values once, in one blob
    stream (lm's probes made a recording of 3 MB with a description and a zip member per answer); a recording of
    another version is never replayed."""
    path = tmp_path / "expected.zip"
    same, other = torch.tensor([1.0, 2.0]), torch.tensor(3.0)
    write_store(path, {f"q#{i}": (same, [("off by one", other), ("sign", same)]) for i in range(3)})
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        assert archive.namelist() == ["manifest.json", "blobs.bin"]
    assert manifest["descriptions"] == ["off by one", "sign"] and len(manifest["blob_sizes"]) == 2
    for value, variants in read_store(path).values():
        assert torch.equal(value, same) and [d for d, _ in variants] == ["off by one", "sign"]
        assert variants[0][1].shape == () and torch.equal(variants[1][1], same)

    manifest["version"] -= 1
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps(manifest))
    assert store_fingerprint(path) == "" and load_store(path)[0] == {}


def test_the_graders_own_time_moves_the_tests_deadline(monkeypatch):
    """Computing the reference's and the known mistakes' values (recording, or grading live) is the grader's time:
    under load a recording of the reference ran past a test's 20 s limit while the grader computed mistakes' values.
    Each span is counted once (on a clock each computation moves, so that load cannot change the figures)."""
    clock = SimpleNamespace(now=100.0)
    monkeypatch.setattr(oracles, "time", SimpleNamespace(monotonic=lambda: clock.now))

    def slow(seconds, value):
        def f():
            clock.now += seconds
            return value
        return SimpleNamespace(f=f)

    oracle = Oracle("record", reference=slow(0.3, 1), mutants=[SimpleNamespace(description="off by one",
                                                                               implementation=slow(0.2, 2))])
    student = Student(None, [], Limits(), Isolation())
    GradingPlugin(SimpleNamespace(oracle=oracle, student=student, assignment=SimpleNamespace(name="masking")))
    student.deadline = 100.0
    oracle.start_test("t")
    assert oracle(lambda impl: impl.f()).value == 1
    assert student.deadline - 100.0 == pytest.approx(oracle.seconds) == pytest.approx(0.5)


def test_a_mistake_that_changes_its_arguments_in_place_leaves_the_tests_inputs_alone():
    """A known mutant that divides its argument in place (``q /= 2``) runs on copies of what the check closes over."""
    def halving(q):
        q /= 2
        return q.sum()

    oracle = Oracle("record", reference=SimpleNamespace(f=lambda q: q.sum()),
                    mutants=[SimpleNamespace(description="halves in place", implementation=SimpleNamespace(f=halving))])
    oracle.start_test("t")
    q, nested = torch.ones(3), {"q": [torch.ones(2)]}
    expected = oracle(lambda impl: impl.f(q) + impl.f(nested["q"][0]))
    assert float(expected.value) == 5 and [float(v) for _, v in expected.variants()] == [2.5]
    assert torch.equal(q, torch.ones(3)) and torch.equal(nested["q"][0], torch.ones(2))
