"""A notebook's ``grader.check`` cells: a question's public suite tests, run in the student's own kernel.

The master notebooks' test cells are Otter's exception-based tests (``ok_format: false``), each a call to
``check(env, "attention", "test_1_warmups.py::test_scores")``. It runs those tests as ``autograder check`` does
(pytest with the grading plugin, the recorded expectations of ``public/expected.zip`` replayed), with the notebook's
namespace as the student's module instead of a sandboxed worker, and raises one ``AssertionError`` holding the
feedback ``autograder check`` prints for them: where an output differs, the largest error, the known mistake it
matches. Otter shows that message under the cell instead of a doctest dump with a traceback.

The student's calls still go through the grader's protocol (``Worker`` answering in this process): arguments and
results are copied as they are between the grader and a worker, so a test reads the same here as in grading. There
is no sandbox and no time limit: it is the student's own kernel, and the student can interrupt it. So this module
alone of the grading side imports the worker's own code (``autograder.worker.serve`` and ``traps``): nothing it runs
beside is trusted (the exception the import contracts in pyproject.toml name).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import time
from types import ModuleType
from typing import Any

import pytest

from autograder import course
from autograder.grading.oracle import Oracle
from autograder.grading.plugin import GradingPlugin, Session
from autograder.grading.proxy import Student
from autograder.grading.runner import pytest_args
from autograder.results import Results
from autograder.sandbox.isolation import Isolation
from autograder.worker.serve import Worker
from autograder.worker.traps import Traps


class InProcess:
    """The ``Channel`` of a notebook's ``Student`` (``autograder.grading.proxy``): each request answered by a ``Worker``
    over this process's modules, as a sandboxed worker would answer it."""

    capture = None  # what the code prints goes to the notebook's own output
    alive = True
    answer: dict = {}  # nothing was confined: the kernel is the student's own (``cuda`` unknown)

    def __init__(self, modules: dict[str, ModuleType]):
        self.worker = Worker([{"name": name} for name in modules], Traps([]), os.getcwd())
        self.worker.modules = dict(modules)
        self.pid = os.getpid()

    def request(self, header: dict, blobs: list[bytes], deadline: float, max_bytes: int | None = None,
                cpu_limit: float | None = None) -> tuple[dict, list[bytes]]:
        """One request, encoded as it would travel to a worker (JSON and ``.npy`` bytes) and answered here (the
        student's own kernel: nothing to bound)."""
        reply, reply_blobs = self.worker.handle(json.loads(json.dumps(header)), blobs)
        return json.loads(json.dumps(reply)), reply_blobs

    def cpu_seconds(self) -> float:
        """This process's CPU time (the kernel's: what the notebook's code runs on)."""
        return time.process_time()

    def close(self) -> None:
        """Nothing to stop: the modules are the notebook's."""


class NotebookStudent(Student):
    """The ``student`` a suite test receives, over the notebook's namespace and the modules it imports."""

    def __init__(self, assignment: course.Assignment, modules: dict[str, ModuleType]):
        super().__init__(None, assignment.modules, assignment.limits, Isolation())
        self._in_process = InProcess(modules)

    def _ensure_worker(self) -> InProcess:
        return self._in_process


def check(env: dict[str, Any], assignment_name: str, *tests: str) -> None:
    """Run the public ``tests`` of ``assignment_name`` on the notebook whose globals are ``env``; raise an
    ``AssertionError`` with their feedback when one fails.

    ``tests`` are ids within the suite's ``public/`` folder (``test_6_notebook.py::test_rope_offset_scores``).
    The assignment's notebook module is ``env``; its other modules (``positions.py``) are imported as the notebook
    imports them.
    """
    assignment = course.load(assignment_name)
    results = run(assignment, modules_of(assignment, env), tests)
    failed = [test for test in results.tests if test.status != "passed"]
    if failed:
        raise AssertionError("\n\n".join(test.feedback() for test in failed))


def modules_of(assignment: course.Assignment, env: dict[str, Any]) -> dict[str, ModuleType]:
    """The assignment's modules as the notebook sees them: its own namespace, and the files it imports."""
    modules = {}
    for entry in assignment.modules:
        if entry.get("notebook"):
            module = ModuleType(entry["name"])
            module.__dict__.update(env)
            modules[entry["name"]] = module
        else:
            modules[entry["name"]] = importlib.import_module(entry["name"])
    return modules


def run(assignment: course.Assignment, modules: dict[str, ModuleType], tests: tuple[str, ...]) -> Results:
    """The results of ``tests`` (public) on ``modules``, graded by the same plugin as ``autograder check``."""
    missing = [test for test in tests if not (assignment.public_dir / test.split("::")[0]).is_file()]
    if not tests or missing:
        raise ValueError(f"name public tests of {assignment.name} to run, as files in {assignment.public_dir}: "
                         f"{', '.join(missing) or 'none given'}")
    results = Results(assignment=assignment.name, submission="notebook")
    session = Session(assignment=assignment, student=NotebookStudent(assignment, modules),
                      oracle=Oracle("replay", store=assignment.expected_file), results=results, out_dir=None)
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        code = pytest.main([*pytest_args(assignment, public_only=True, tests=tests), "--capture=sys"],
                           plugins=[GradingPlugin(session)])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not results.tests:
        raise RuntimeError(f"the checks of {assignment.name} could not run (pytest exit code {int(code)}); tell the "
                           f"course staff:\n{log.getvalue()[-2000:]}")
    return results
