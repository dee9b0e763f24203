"""Grading one submission: stage it, scan it, run the suite against it, write the results.

``python -m autograder.grading.runner`` is what ``autograder grade`` starts once per submission, so
pytest state, worker processes and crashes stay per submission. The runner is trusted: it
holds the reference and the hidden tests; student code only ever runs in its worker.
Whatever happens to the submission (it is missing, will not unzip, will not import, loops, or
uses up the submission's time budget), a ``results.json`` is written and every collected test
appears in it, with zero points and a reason where it could not run.

The job (which submission, where to write) arrives as JSON on stdin: a command line is readable by every user of
the machine, sandbox users included. The runner stops cleanly on SIGTERM or SIGINT (its workers killed, its
folders removed, the tests that did not run listed), and receives SIGTERM when the process that started it dies.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from autograder import ceilings, course, forking, scratch, sinks
from autograder.course import REPO_ROOT
from autograder.grading import staticcheck
from autograder.grading.answers import NotebookError, collect_answers
from autograder.grading.oracle import Oracle
from autograder.grading.plugin import GradingPlugin, Session
from autograder.grading.proxy import Student
from autograder.grading_options import GradingOptions
from autograder.results import STOPPED, Results, Status, TestResult
from autograder.sandbox import permissions
from autograder.sandbox import zygote as worker_zygote
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.reaping import become_subreaper
from autograder.submission import SubmissionError, digest, metadata_files, stage

# What a job may say besides its grading options (``options``: ``GradingOptions.to_json``): the assignment, the
# submission (a folder or zip) and its name in the results, where to write (out), where to record expectations
# (record_to), the folder for temporary files, the batch's folder of known mistakes' values (shared) and when the batch
# started the runner. (Gradescope's submission metadata is applied to the finished results by autograder.gradescope,
# which reads it.)
JOB_FIELDS = {"assignment", "submission", "out", "name", "options", "record_to", "tmp", "shared", "started"}


class OutOfTime(KeyboardInterrupt):
    """Raised by the alarm when the submission's time budget is spent (pytest stops cleanly on it)."""


class Stopped(KeyboardInterrupt):
    """Raised on SIGTERM or SIGINT: the grader is being stopped (pytest stops cleanly on it); ``requested`` says
    that it happened, since pytest does not re-raise it."""

    requested = False


def grade_one(assignment: course.Assignment, source: Path, out_dir: Path | None, *, name: str,
              options: GradingOptions = GradingOptions(), record_to: Path | None = None,
              requested: float | None = None, shared: Path | None = None,
              isolation: Isolation | None = None) -> Results:
    """Grade ``source`` against ``assignment``'s suite as ``options`` say (``GradingOptions``: which tests, which
    oracle, which secret); write into ``out_dir`` when given. ``requested``: when (epoch
    seconds) the batch started this runner, for the start-up phase (default: when this process began). ``shared``:
    the batch's folder of known mistakes' values (``autograder.grading.oracle``). ``isolation``: the workers'
    confinement where the caller chose it (``check`` without Linux's layers), else ``Isolation.detect``'s.

    Tests tagged with one of ``options.skip_tags`` (e.g. "retraining") are not run and carry no points; the
    results' output lists them.
    """
    started = time.monotonic()
    become_subreaper()
    if isolation is None or isolation.linux:
        worker_zygote.start()
    results = Results(assignment=assignment.name, submission=name)
    results.extra_data["device"] = grading_device()
    set_threads(assignment.limits.threads)
    isolation = isolation or Isolation.detect()
    permissions.keep_out(isolation, checkout=REPO_ROOT)
    workdir = scratch.make("run")
    broken, root, violations = None, None, {}
    # Until grading began: the process's start, its workers' zygote forked, the checkout kept out of their reach.
    phases = {"startup": time.time() - (requested or psutil.Process().create_time())}
    mark = time.monotonic()
    try:
        root = stage(source, assignment.files, workdir, assignment.carried)
        results.extra_data["content"] = digest(root)  # before the student's code runs (``grade --resume`` matches it)
        violations = staticcheck.scan(root, assignment.files, assignment.forbidden)
    except SubmissionError as exc:
        broken = f"Your submission could not be graded: {exc}."
    written = manual_results(assignment, root)  # read now: the staged copy is deleted after grading
    ignored = ignored_metadata(root)
    phases["staging"], mark = time.monotonic() - mark, time.monotonic()
    results.extra_data["isolation"] = isolation.note()
    student = Student(root, assignment.modules, assignment.limits, isolation, assignment.forbidden, broken,
                      load_seconds=assignment.load_timeout)
    secret = options.secret if options.secret is not None else assignment.secret
    oracle, reference = make_oracle(assignment, options.oracle, record_to, shared, secret)
    phases["reference"], mark = time.monotonic() - mark, time.monotonic()
    session = Session(assignment=assignment, student=student, oracle=oracle, results=results, out_dir=out_dir,
                      reference=reference, violations=violations, isolation=isolation, skip_tags=options.skip_tags,
                      secret=secret)
    plugin = GradingPlugin(session)
    handlers = {signal.SIGALRM: _out_of_time, signal.SIGTERM: _stop, signal.SIGINT: _stop}
    previous = {number: signal.signal(number, handler) for number, handler in handlers.items()}
    signal.alarm(max(1, int(assignment.submission_timeout)))
    log = io.StringIO()
    Stopped.requested = False
    try:
        with contextlib.redirect_stdout(log):
            code = pytest.main(pytest_args(assignment, options.public_only, options.hidden_only), plugins=[plugin])
    except KeyboardInterrupt:  # OutOfTime or Stopped, outside a test
        code = pytest.ExitCode.INTERRUPTED
    finally:
        signal.alarm(0)
        for number, handler in previous.items():
            signal.signal(number, handler)
        phases["tests"], mark = time.monotonic() - mark, time.monotonic()
        session.close()
        scratch.remove(workdir)
        phases["shutdown"] = time.monotonic() - mark
    oracle.save()
    results.extra_data["phases"] = timings(phases, session, oracle, plugin)
    _finish(results, plugin, session, code, broken, violations, assignment)
    results.output = "\n\n".join(part for part in (results.output, ignored) if part)
    results.tests += written
    results.execution_time = time.monotonic() - started
    if out_dir is not None:
        results.write(out_dir)
        (out_dir / "grader.log").write_text(log.getvalue() + "\n".join(session.log))
    return results


def timings(phases: dict, session: Session, oracle: Oracle, plugin: GradingPlugin) -> dict:
    """Seconds per phase of a grading (for ``bench/grading.py`` and course staff): the process until grading began,
    staging, loading the reference, the tests, shutting down; within the tests, starting workers (forked, confined,
    ready), importing the code in them (a module's top level: a notebook's cells), waiting on calls of that code,
    computing expected values, and the runtime tests."""
    workers = [session.student, *([session._reference_worker] if session._reference_worker else [])]
    within = {"workers starting": sum(w.seconds["starting"] for w in workers),
              "loading code": sum(w.seconds["loading"] for w in workers),
              "student code": sum(w.seconds["calls"] for w in workers),
              "expected values": oracle.seconds, "runtime tests": plugin.seconds.get("runtime", 0.0)}
    return {name: round(value, 3) for name, value in {**phases, **within}.items()}


def _out_of_time(signum, frame):
    raise OutOfTime()


def _stop(signum, frame):
    Stopped.requested = True
    raise Stopped()


def _finish(results: Results, plugin: GradingPlugin, session: Session, code, broken, violations, assignment) -> None:
    notes = []
    results.set_status(Status.GRADED)
    if broken:
        notes.append(sinks.line(broken))  # it quotes the submission's file names: one line starts no heading
        results.set_status(Status.NOT_GRADED, broken.removeprefix("Your submission could not be graded: "))
    elif session.student.grader_problem:
        results.set_status(Status.GRADER_FAILED, session.student.grader_problem[:300])
        notes.append(f"The grader failed, not your code: {session.student.grader_problem}\nNo test could run; tell "
                     "the course staff.")
    elif session.student.broken:
        why = session.student.broken_headline or session.student.broken.splitlines()[0]
        results.set_status(Status.DOES_NOT_LOAD, why)
        notes.append(f"Your code could not be loaded, so no test could run:\n\n{session.student.broken}")
        notes += carried_notes(assignment, session.student.broken)
    if session.student.load_warnings:
        notes.append("Some notebook cells raised errors (the rest of the notebook still ran):\n"
                     + "\n".join(f"- {sinks.inline(w)}" for w in session.student.load_warnings))
    unchecked = violations.get(staticcheck.UNCHECKED, [])
    if unchecked:
        notes.append("Your code could not be checked for forbidden library routines (tests that check a part of "
                     "your code earn no points until it can be):\n" + "\n".join(f"- {f}" for f in unchecked))
    found = [f"- {f}" for symbol, items in violations.items() if symbol != staticcheck.UNCHECKED for f in items]
    if found:
        notes.append("Forbidden library routines found (tests that cover them earn no points):\n" + "\n".join(found))
    graded = {t.extra_data.get("test") for t in results.tests}
    missing = [item for item in plugin.collected if item[0] not in graded]
    if Stopped.requested and missing:
        results.set_status(Status.INCOMPLETE, STOPPED)
        notes.append(f"The grader was stopped while grading this submission; {len(missing)} test(s) did not run.")
        reason = "Not run: the grader was stopped."
    elif code == pytest.ExitCode.INTERRUPTED and missing:
        results.set_status(Status.INCOMPLETE, "out of time")
        notes.append(f"Grading stopped when the submission's time budget ({assignment.submission_timeout:g} s) "
                     f"ran out; {len(missing)} test(s) did not run.")
        reason = "Not run: the grading time budget ran out."
    else:
        reason = "Not run: the grader stopped early (see the log)."
    for _, test in missing:
        test.output = test.output or reason
        test.extra_data["pending"] = True  # not run: the gradebook leaves its score empty
        results.tests.append(test)
    if plugin.skipped:
        tags = ", ".join(sorted(set(session.skip_tags)))
        results.extra_data["skipped"] = [{"number": t.number, "name": t.name, "max_score": t.max_score}
                                         for t in plugin.skipped]
        notes.append(f"Not run in this grading, and not counted in the maximum score (the grader skipped the tests "
                     f"tagged {tags}):\n" + "\n".join(f"- {t.number} {t.name} ({t.max_score:g} points)"
                                                      for t in plugin.skipped))
    everything_skipped = code == pytest.ExitCode.NO_TESTS_COLLECTED and plugin.skipped
    if code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED) \
            and not everything_skipped:
        notes.append(f"The grader itself failed (pytest exit code {int(code)}); tell the course staff.")
        session.log.append(f"pytest exit code {int(code)}")
    results.output = "\n\n".join(notes)


def ignored_metadata(root: Path | None) -> str:
    """The line that tells a student the metadata files in their submission were ignored (``metadata_files``)."""
    found = metadata_files(root) if root is not None else []
    if not found:
        return ""
    return (f"Ignored: {', '.join(found)} in your submission. Who made a submission is taken from Gradescope's own "
            "records only, never from a file in it; remove it from what you hand in.")


def carried_notes(assignment: course.Assignment, broken: str) -> list[str]:
    """A pointer to the earlier assignment when the error that stopped loading is in a carried file."""
    return [f"The error is in {file}, your file from the {source} assignment, which this one builds on: fix it "
            f"there (`autograder check {source}` runs its public tests) and copy it into this submission again."
            for file, source in assignment.carried.items() if f'File "{file}"' in broken]


def manual_results(assignment: course.Assignment, root: Path | None) -> list[TestResult]:
    """One entry per written question: the student's answer, for human graders (0 automatic points)."""
    if not assignment.manual_file.is_file():
        return []
    questions = json.loads(assignment.manual_file.read_text())
    answers: dict[str, str] = {}
    notebook = next(iter(assignment.notebooks), None)
    if root is not None and notebook:
        with contextlib.suppress(NotebookError):
            answers = collect_answers(root / notebook, questions)
    out = []
    for index, question in enumerate(questions, start=1):
        answer = answers.get(question["name"], "")
        out.append(TestResult(
            name=f"{question['name']}: written answer ({question['points']:g} points, graded by hand)",
            number=f"M.{index}", score=0.0, max_score=0.0, status="passed",
            output=sinks.fenced(answer) if answer else "(no answer found)", visibility="visible", tags=["manual"],
            extra_data={"manual": True, "question": question["name"], "points": question["points"],
                        "answer": answer},
        ))
    return out


def pytest_args(assignment: course.Assignment, public_only: bool, hidden_only: bool = False,
                tests: tuple[str, ...] = ()) -> list[str]:
    """pytest's command line for the suite: public and hidden tests, or one kind; ``tests``
    (``test_1_warmups.py::test_scores``) picks public tests."""
    paths = [] if hidden_only else [assignment.public_dir / test for test in tests] or [assignment.public_dir]
    if not public_only and assignment.hidden_dir.is_dir():
        paths.append(assignment.hidden_dir)
    if not paths:
        raise course.AssignmentError(f"{assignment.name} has no hidden tests to run")
    # --assert=plain: a failing `assert x, "message"` reads "message", without pytest's introspection.
    # --tb=native: students read the plugin's words, never pytest's report, whose default traceback (the source of
    # every frame, parsed) cost 40 ms per failed test; the runner's log keeps a plain traceback for the staff.
    # no:unraisableexception: its collection of every object at the end of the session cost 0.15 s a grading.
    # --disable-plugin-autoload: only pytest and the grading plugin decide a grade, never a plugin that happens to be
    # installed beside the grader (pytest-randomly would reorder the tests; hypothesis's imported hypothesis and trio
    # at the end of every grading, half a second).
    return [*(str(p) for p in paths), "-q", "--assert=plain", "--tb=native", "--disable-plugin-autoload",
            "-p", "no:cacheprovider", "-p", "no:unraisableexception",
            "-o", "addopts=",
            "-o", "console_output_style=classic", "--rootdir", str(course.REPO_ROOT), "-W",
            "ignore::DeprecationWarning"]


def make_oracle(assignment: course.Assignment, mode: str, record_to: Path | None = None,
                shared: Path | None = None, secret: str = ""):
    """The oracle for this run and the reference implementation (``None`` when replaying).

    ``record`` mode writes to ``record_to`` (default: the assignment's ``public/expected.zip``); live checks share
    the reference's and the known mistakes' values in ``shared`` under the assignment's name and the term's
    ``secret`` (``autograder.grading.oracle``; a batch may grade several assignments, whose suites ask alike).
    ``verdicts`` is ``live`` without the known mistakes' values: scores only, no mistake named (``validate``'s runs
    under fresh secrets, which compare verdicts; computing every mistake's value for every failed comparison is most of
    a mutant's grading).
    """
    if mode == "auto":
        mode = "live" if assignment.has_reference else "replay"
    if mode == "replay":
        return Oracle("replay", store=assignment.expected_file), None
    if not assignment.has_reference:
        raise course.AssignmentError(f"{assignment.name}: the reference in {assignment.solution_dir} is missing")
    # The reference and the mutant catalogue are the instructor's: imported here, never by a student's `check`
    # (replay), whose copy of the harness does not hold them.
    from autograder.grading import mutants, trusted_import

    reference = trusted_import.load(assignment.solution_dir, assignment.modules)
    store = (record_to or assignment.expected_file) if mode == "record" else assignment.expected_file
    known = [] if mode == "verdicts" else mutants.fingerprints(assignment)
    return Oracle("live" if mode == "verdicts" else mode, reference, known, store, assignment.recording_fingerprint(),
                  shared=shared, salt=f"{assignment.name}/{secret}"), reference


def set_threads(threads: int) -> None:
    """Compute reference and mutant values with the student's thread count: their tensors are small, and with
    several submissions graded at once, more threads than cores make every small operation wait."""
    import torch

    torch.set_num_threads(threads)


def grading_device() -> str:
    """Asked after ``worker_zygote.start``: on a GPU, asking breaks later forks of this process
    (``autograder.forking``)."""
    import torch

    if torch.cuda.is_available():
        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({os.cpu_count()} cores, torch {torch.__version__})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grade one submission (started by `autograder grade`): the job is a "
                                                 "JSON object on stdin (see JOB_FIELDS).")
    parser.parse_args(argv)
    with contextlib.suppress(OSError, AttributeError):  # stop (SIGTERM) when the process that started us dies
        forking.die_with_parent(signal.SIGTERM)
    worker_zygote.start()  # before the job is read: the workers' zygote must not hold it
    ceilings.impose(ceilings.RUNNER_MB)
    job = json.loads(sys.stdin.read())
    if job.get("tmp"):  # the batch's scratch folder (a forked runner's environment is its zygote's)
        os.environ["TMPDIR"] = tempfile.tempdir = job["tmp"]
    unknown = set(job) - JOB_FIELDS
    if unknown or not {"assignment", "submission", "name"} <= set(job):
        raise SystemExit(f"a runner job needs assignment, submission and name, and knows only {sorted(JOB_FIELDS)}")
    try:
        options = GradingOptions.from_json(job.get("options", {}))
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"a runner job's options: {exc}") from None
    assignment = course.load(job["assignment"])
    grade_one(assignment, Path(job["submission"]), Path(job["out"]) if job.get("out") else None, name=job["name"],
              options=options, record_to=Path(job["record_to"]) if job.get("record_to") else None,
              requested=job.get("started"), shared=Path(job["shared"]) if job.get("shared") else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
