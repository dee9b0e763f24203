"""The pytest plugin that turns a suite run into scored ``TestResult``s.

It provides the fixtures tests use (``student``, ``reference``, ``oracle``, ``parts``, ``seed``,
``forbidden_findings``, and for runtime checks ``reference_student`` and ``device``),
enforces that every test is ``@graded``, orders public tests before hidden ones, leaves out the tests
whose tags (``tags`` and ``covers``, as results.json lists them) meet the session's ``skip_tags``, gives each test
its time limit as a deadline on the student proxy, fails tests whose covered symbols use a
forbidden API, points failing tests that build on a carried module (``builds_on``) at a failed check of
that module (``checks_carried``), and writes ``results.json`` after every test.

Failure text is built from the exception message only, never from pytest's traceback: hidden
tests' source must not reach students, and the parent's frames mean nothing to them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from autograder import scratch, sinks
from autograder.course import Assignment
from autograder.grading import naming
from autograder.grading.api import Parts, carried_file, derive_seed, matched_mistakes, same_value, start_test
from autograder.grading.oracle import Oracle
from autograder.grading.proxy import ForbiddenAPI, GraderFailure, Student, StudentCodeFailure, SubmissionBroken
from autograder.grading.staticcheck import MODULE_LEVEL, UNCHECKED
from autograder.results import Results, TestResult
from autograder.sandbox.isolation import Isolation
from autograder.submission import stage

PUBLIC_SEED = "public"
OUT_OF_REACH = "; the sandbox kept CUDA from the workers, so runtime tests ran on the CPU"


@dataclass
class Session:
    """Everything the plugin needs to grade one submission."""

    assignment: Assignment
    student: Student
    oracle: Oracle
    results: Results
    out_dir: Path | None
    reference: Any = None
    violations: dict[str, list[str]] = field(default_factory=dict)
    secret: str = ""
    log: list[str] = field(default_factory=list)
    isolation: Isolation = field(default_factory=Isolation)
    skip_tags: tuple[str, ...] = ()
    _reference_worker: Student | None = None
    _reference_dir: Path | None = None

    def reference_worker(self) -> Student:
        """The reference, in a sandboxed worker like the student's (same limits and threads): for runtime ratios.

        Started on first use from a private copy of ``solutions/NAME`` (its own uid, as the student's worker has);
        ``close`` stops it.
        """
        if self._reference_worker is None:
            self._reference_dir = scratch.make("reference")
            root = stage(self.assignment.solution_dir, self.assignment.files, self._reference_dir)
            self._reference_worker = Student(root, self.assignment.modules, self.assignment.limits, self.isolation,
                                             load_seconds=self.assignment.load_timeout)
        return self._reference_worker

    def close(self) -> None:
        """Stop every worker this session started."""
        self.student.close()
        if self._reference_worker is not None:
            self._reference_worker.close()
        if self._reference_dir is not None:
            scratch.remove(self._reference_dir)


class GradingPlugin:
    def __init__(self, session: Session):
        self.session = session
        session.oracle.on_spent = session.student.excuse
        self.started = time.monotonic()
        self._numbers: dict[str, str] = {}
        self.collected: list[tuple[str, TestResult]] = []
        self.skipped: list[TestResult] = []  # deselected by the session's skip_tags: never run, no points
        self.seconds: dict[str, float] = {}  # time spent in the tests of each tag
        self._carried_failed: dict[str, str] = {}  # carried module -> the failed test that checks it
        self.naming = naming.Confirmation(session.student, session.oracle,
                                          naming.probes_of(f"autograder.suites.{session.assignment.name}"), same_value)

    # ------------------------------------------------------------ fixtures

    @pytest.fixture
    def student(self) -> Student:
        return self.session.student

    @pytest.fixture
    def reference(self):
        if self.session.reference is None:
            pytest.fail("this test needs the reference solution, which is only available to the grader")
        return self.session.reference

    @pytest.fixture
    def oracle(self) -> Oracle:
        return self.session.oracle

    @pytest.fixture
    def parts(self, request) -> Parts:
        request.node.ag_parts = Parts()
        return request.node.ag_parts

    @pytest.fixture
    def reference_student(self) -> Student:
        """The reference as a ``student``-like proxy in its own sandbox (runtime checks compare the two)."""
        if self.session.reference is None:
            pytest.skip("runtime is compared with the reference by the course's grader, not by `autograder check`")
        return self.session.reference_worker()

    @pytest.fixture
    def device(self, reference_student) -> str:
        """Where runtime checks run: ``cuda`` on a GPU grader whose workers (the student's and the reference's) can
        use it, else ``cpu``. A sandbox that keeps CUDA out must not fail correct code: the tests then run on the CPU,
        and the results' device says so."""
        import torch

        if not torch.cuda.is_available():
            return "cpu"
        if self.session.student.gpu() and reference_student.gpu():
            return "cuda"
        extra = self.session.results.extra_data
        if OUT_OF_REACH not in extra.get("device", ""):
            extra["device"] = extra.get("device", "") + OUT_OF_REACH
        return "cpu"

    @pytest.fixture
    def forbidden_findings(self) -> dict[str, list[str]]:
        """The static scan's findings: ``{symbol: ["file, line N: uses NAME", ...]}``."""
        return self.session.violations

    @pytest.fixture
    def seed(self, request) -> int:
        """Deterministic per test; hidden tests mix in the secret students never see."""
        hidden = _location(request.node) == "hidden"
        return derive_seed(_test_id(request.node), self.session.secret if hidden else PUBLIC_SEED)

    # ------------------------------------------------------------ collection

    def pytest_collection_modifyitems(self, session, config, items) -> None:
        problems = []
        for item in items:
            marker = item.get_closest_marker("graded")
            if marker is None:
                problems.append(f"{item.nodeid}: every suite test needs @graded(points=...)")
                continue
            location = _location(item)
            visibility = marker.kwargs.get("visibility") or ("visible" if location == "public" else "after_due_date")
            if location == "public" and visibility != "visible":
                problems.append(f"{item.nodeid}: tests in public/ ship to students, so they must be visible")
            item.ag_visibility = visibility
        if problems:
            raise pytest.UsageError("\n".join(problems))
        items.sort(key=lambda item: _location(item) != "public")
        files: dict[str, int] = {}
        for item in items:
            file_number = files.setdefault(str(item.path), len(files) + 1)
            count = sum(1 for n in self._numbers.values() if n.startswith(f"{file_number}."))
            self._numbers[item.nodeid] = f"{file_number}.{count + 1}"
        # Numbered before skipping, so a test keeps its number (and gradebook column) in every run.
        kept = []
        for item in items:
            blank = self._blank(item)
            if set(blank.tags) & set(self.session.skip_tags):
                self.skipped.append(blank)
            else:
                kept.append(item)
                self.collected.append((_test_id(item), blank))
        if len(kept) < len(items):
            config.hook.pytest_deselected(items=[item for item in items if item not in kept])
            items[:] = kept
        self._write()  # every test listed from the start: a grading that dies keeps its maximum

    def _blank(self, item) -> TestResult:
        """The result of ``item`` before it runs: no points yet."""
        marker = item.get_closest_marker("graded")
        doc = (item.function.__doc__ or "").strip().splitlines()
        return TestResult(
            name=doc[0] if doc else item.name,
            number=self._numbers.get(item.nodeid, ""),
            score=0.0,
            max_score=marker.kwargs["points"],
            status="failed",
            visibility=item.ag_visibility,
            tags=[*marker.kwargs.get("covers", ()), *marker.kwargs.get("tags", ())],
            extra_data={"test": _test_id(item)},
        )

    # ------------------------------------------------------------ running

    def pytest_runtest_setup(self, item) -> None:
        marker = item.get_closest_marker("graded")
        timeout = marker.kwargs.get("timeout") or self.session.assignment.timeout
        self.session.oracle.start_test(_test_id(item))
        start_test()
        student = self.session.student
        student.deadline = time.monotonic() + timeout
        student.time_limit = timeout
        item.ag_output_mark = student.output_mark()
        covered = marker.kwargs.get("covers", ())
        unchecked = self.session.violations.get(UNCHECKED, []) if covered else []
        if unchecked:
            raise ForbiddenAPI("the grader could not check your code for library routines the assignment forbids, so "
                               "this part earns no points:\n" + "\n".join(f"- {f}" for f in unchecked))
        found = [f for symbol in (*covered, MODULE_LEVEL) if covered
                 for f in self.session.violations.get(symbol, [])]
        if found:
            raise ForbiddenAPI("this part uses a library routine the assignment forbids, so it earns no points:\n"
                               + "\n".join(f"- {f}" for f in found)
                               + "\nWrite the computation yourself with basic tensor operations.")

    def pytest_runtest_teardown(self, item) -> None:
        self.session.student.deadline = None

    def pytest_sessionfinish(self, session) -> None:
        """Recording (``autograder build``): the naming experiments' values too, so that a student's ``check`` can
        confirm a name as a grading does (``autograder.grading.naming``)."""
        if self.session.oracle.mode == "record":
            self.naming.record()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when == "setup" and report.outcome != "passed":
            self._record(item, report, call)
        elif call.when == "call":
            for tag in item.get_closest_marker("graded").kwargs.get("tags", ()):
                self.seconds[tag] = self.seconds.get(tag, 0.0) + report.duration
            self._record(item, report, call)

    def _record(self, item, report, call) -> None:
        marker = item.get_closest_marker("graded")
        points = marker.kwargs["points"]
        parts: Parts | None = getattr(item, "ag_parts", None)
        messages, extra = [], {}
        if report.skipped:
            reason = call.excinfo.value.msg if call.excinfo is not None else "skipped"
            score, points, status = 0.0, 0.0, "passed"
            messages.append(f"Not graded here: {reason}")
        elif report.passed and (parts is None or parts.all_passed):
            score, status = points, "passed"
            messages += parts.notes if parts is not None else []
        else:
            # Fail closed: partial credit comes from parts only, and only when nothing escaped them (a check that
            # raised outside a part may have skipped parts that would have failed).
            escaped = call.excinfo is not None
            score = points * parts.fraction() if parts is not None and parts.used and not escaped else 0.0
            status = "failed"
            if parts is not None and parts.used:
                messages.append(parts.summary())
            messages += parts.notes if parts is not None else []
            if call.excinfo is not None:
                messages.append(self._explain(item, call.excinfo))
            checked = marker.kwargs.get("checks_carried")
            if checked:  # before naming: the mistakes this test finds are the carried file's
                blank = self._blank(item)
                self._carried_failed[checked] = f"{blank.number} \"{blank.name}\""
            excluded = self._carried_passed(matched_mistakes())
            candidates = matched_mistakes(excluded)
            confirmed = [m for m in candidates if self.naming.confirms(m)]
            if len(confirmed) == 1:  # of those the test's outputs match, the one the probes confirm
                messages.append(f"This looks like a known mistake: {confirmed[0]}")
                extra["mistake"] = confirmed[0]
                if confirmed[0] in self.naming.unprobed:  # for validate's count of names no experiment confirms
                    extra["mistake_unprobed"] = True
            elif len(confirmed) > 1:  # for validate: which mistakes neither this test nor the probes tell apart
                extra["mistakes_alike"] = confirmed
            elif candidates:
                messages.append(naming.UNCONFIRMED)
            printed = self.session.student.output_since(getattr(item, "ag_output_mark", (0, 0)))
            if printed.strip():
                messages.append(f"Your code printed:\n{sinks.fenced(printed)}")
            messages += self._carried_notes(item, marker)
            unloaded = self._unloaded(parts, call.excinfo)
            if unloaded:
                messages = [unloaded]
        if parts is not None:
            self.session.log += parts.grader_errors
            if parts.figures:
                extra["figures"] = parts.figures
        test = self._blank(item)
        test.extra_data.update(extra)
        test.score, test.max_score, test.status = round(score, 4), points, status
        test.output = "\n\n".join(m for m in messages if m)
        self.session.results.tests.append(test)
        self.session.results.execution_time = time.monotonic() - self.started
        self._write()

    def _unloaded(self, parts: Parts | None, excinfo) -> str:
        """For a failed test: a pointer to the top of the report when its only failure is that the submission could
        not be staged or loaded, or that the grader could not start it (said once there, not under every test)."""
        student = self.session.student
        reasons = [reason for reason in (student.broken, student.grader_problem) if reason]
        if not reasons or (excinfo is not None and not isinstance(excinfo.value, SubmissionBroken | GraderFailure)):
            return ""
        errors = [error for _, _, error in parts.results if error is not None] if parts is not None else []
        if (excinfo is None and not errors) or not all(any(r in error for r in reasons) for error in errors):
            return ""
        if student.grader_problem:
            return "Not run: the grader could not run your code (see the top of this report)."
        if student.root is None:
            return "Not run: your submission could not be graded as handed in (see the top of this report)."
        return "Not run: your code did not load (see the top of this report)."

    def _write(self) -> None:
        """Write results.json: the tests finished so far, then every other collected test at zero, marked pending."""
        if self.session.out_dir is None:
            return
        results = self.session.results
        finished = {t.extra_data.get("test") for t in results.tests}
        pending = [self.pending(test) for test_id, test in self.collected if test_id not in finished]
        Results(assignment=results.assignment, submission=results.submission, tests=[*results.tests, *pending],
                output=results.output, execution_time=time.monotonic() - self.started,
                extra_data=results.extra_data).write(self.session.out_dir, final=False)

    @staticmethod
    def pending(test: TestResult) -> TestResult:
        """A collected test that has not run (yet): zero points out of its maximum."""
        return replace(test, output=test.output or "Not run: the grading stopped before this test.",
                       extra_data={**test.extra_data, "pending": True})

    def _carried_passed(self, mistakes: list[str]) -> frozenset[str]:
        """The ``mistakes`` in a carried file whose own checks that file passed (or were not run): a mistake in this
        assignment's own code whose output looks like one of them must not be blamed on the carried file."""
        failed = {f"{module}.py" for module in self._carried_failed}
        return frozenset(m for m in mistakes if carried_file(m) not in (None, *failed))

    def _carried_notes(self, item, marker) -> list[str]:
        """For a failed test that builds on a carried module whose own checks failed: the pointer to them."""
        notes = []
        for module in marker.kwargs.get("builds_on", ()):
            if module in self._carried_failed:
                file = f"{module}.py"
                source = self.session.assignment.carried.get(file, "an earlier")
                notes.append(f"Note: this test builds on your {file} from the {source} assignment, which fails its "
                             f"own checks (see test {self._carried_failed[module]}). Fix {file} first: it may be "
                             "the only cause of this failure.")
        return notes

    def _explain(self, item, excinfo) -> str:
        value = excinfo.value
        if isinstance(value, StudentCodeFailure | AssertionError):
            return str(value).strip() or "the check failed"
        if isinstance(value, pytest.fail.Exception):
            return str(value.msg)
        self.session.log.append(f"{item.nodeid}: {excinfo.getrepr(style='short')}")
        return (f"The grader could not check this ({type(value).__name__}: {value}). If your code returns what "
                "the handout documents, this is a grader problem: tell the course staff.")


def _location(item) -> str:
    return "hidden" if "hidden" in Path(item.path).parts[-3:-1] else "public"


def _test_id(item) -> str:
    """The test id relative to the suite folder, stable across machines (``public/test_x.py::test_y``)."""
    parts = item.nodeid.replace(os.sep, "/").split("/")
    for anchor in ("public", "hidden"):
        if anchor in parts:
            return "/".join(parts[parts.index(anchor):])
    return item.nodeid
