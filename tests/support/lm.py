"""Shared by the tests of the LM reference: the reference imported once, a tiny preset and a tiny world, and the
hidden retraining test run alone on the reference (``retrain``, also bench/oversubscribed.py's), with CPU hogs started
after its calibration where asked."""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import course
from autograder.grading import Parts, trusted_import
from autograder.grading.proxy import Student
from autograder.sandbox.isolation import Isolation
from autograder.suites.lm import evaluation, gates
from autograder.suites.lm.hidden import test_retraining
from autograder.suites.lm.world import World, generate_world

LM = course.load("lm")


@functools.cache
def reference() -> SimpleNamespace:
    """The reference's modules: ``.dataset``, ``.model``, ``.trainer``, ``.run`` (and the carried ones)."""
    return trusted_import.load(LM.solution_dir, LM.modules)


def tiny_preset(**changes):
    """A preset small enough that a whole run takes a second or two on a CPU."""
    fields = dict(n_layer=1, n_head=2, n_embd=16, block_size=64, dropout=0.0, pretrain_epochs=2,
                  pretrain_batch_size=8, pretrain_lr=3e-3, finetune_epochs=2, scratch_epochs=3,
                  finetune_batch_size=8, finetune_lr=1e-3, warmup_tokens=64 * 8, num_workers=0, autocast="off")
    return reference().run.Preset(**{**fields, **changes})


@functools.cache
def tiny_world() -> World:
    return generate_world("tests", people=40, dev=10, test=10, bios_per_person=2, templates=4)


def corpus(world: World | None = None) -> str:
    """The text of wiki.txt for ``world`` (default: the tiny one)."""
    return "".join(f"{line}\n" for line in (world or tiny_world()).bios)


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run faster on one thread, and far faster when other processes share the cores (OpenMP
    threads wait for each other at every operation); import this fixture into a test module to use it."""
    with evaluation.one_thread():
        yield


def retrain(run_py_tail: str = "", seed: int = 7, hogs: int = 0, hog_seconds: float | None = None) -> Parts:
    """The hidden retraining test's parts for the reference with ``run_py_tail`` appended to its run.py, graded in a
    sandboxed worker on the secret world of ``seed``, with ``hogs`` CPU-bound processes running from the end of the
    test's calibration step for ``hog_seconds`` (None: to the end of the test; ``hogs_after_calibration``)."""
    folder = Path(tempfile.mkdtemp(prefix="autograder-retraining-"))
    submission = folder / "submission"
    submission.mkdir()
    for module in LM.modules:
        shutil.copy(LM.solution_dir / f"{module['name']}.py", submission)
    with open(submission / "run.py", "a") as handle:
        handle.write(textwrap.dedent(run_py_tail))
    student = Student(submission, LM.modules, LM.limits, Isolation.detect(), LM.forbidden)
    student.deadline = time.monotonic() + gates.load().budget.scaled(gates.MAX_SLOWDOWN).deadline
    parts = Parts()
    try:
        with hogs_after_calibration(hogs, hog_seconds):
            test_retraining.test_retraining(student, reference(), parts, seed=seed)
    finally:
        student.close()
        shutil.rmtree(folder, ignore_errors=True)
    return parts


@contextlib.contextmanager
def hogs_after_calibration(count: int, seconds: float | None = None) -> Iterator[None]:
    """Inside the block, ``count`` processes that spin on the CPU start as soon as ``gates.calibration_seconds``
    returns (the load that arrives after the grader measured the machine), and stop after ``seconds`` or when the
    block ends."""
    measure, hogs = gates.calibration_seconds, []
    lasting = seconds if seconds is not None else 1e9
    spin = (f"import os, time\nparent, end = os.getppid(), time.monotonic() + {lasting}\n"
            "while time.monotonic() < end and os.getppid() == parent:\n    pass")  # a killed parent leaves none behind

    def measure_then_load(*args):
        measured = measure(*args)
        # each in a session of its own: with the kernel's autogroups, hogs of one session would weigh as one process
        hogs.extend(subprocess.Popen([sys.executable, "-c", spin], start_new_session=True) for _ in range(count))
        return measured

    gates.calibration_seconds = measure_then_load
    try:
        yield
    finally:
        gates.calibration_seconds = measure
        for hog in hogs:
            hog.kill()
            hog.wait()
