"""Grading one job in a runner process of its own (``python -m autograder.grading.runner``, its job on stdin), so that
a submission that brings its grading process down cannot affect the others; without namespaces, one at a time
(``permissions.graded_alone``). When a runner dies or overruns its hard limit, the batch completes its results file
itself (``completed``): every test the runner collected is listed, the unfinished ones at zero, so the maximum does
not shrink."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
from pathlib import Path

from autograder import course, sinks, trees
from autograder.batch.discovery import Job
from autograder.batch.runners import Runners
from autograder.course import SECRET_ENV
from autograder.grading_options import GradingOptions
from autograder.results import Results, Status, TestResult, read_results
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation

HARD_LIMIT_MARGIN = 120.0


def grade_job(job: Job, out_dir: Path, options: GradingOptions = GradingOptions(), *,
              runners: Runners | None = None) -> Results | None:
    """Grade one job in its own runner process into ``out_dir``; a results file is written whatever happens, unless
    the batch was stopped before the runner listed its tests (then nothing, and None).

    ``options``: the batch's, under the job's own (``GradingOptions.over``), the term's secret where neither sets one
    (``with_term_secret``); ``runners`` are the batch's runners (a lone job gets its own).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    results_file = out_dir / "results.json"
    results_file.unlink(missing_ok=True)
    if job.problem or job.assignment is None:
        return not_graded(job, out_dir)
    if runners is None:
        runners = Runners(Isolation.detect())
        with runners.stop_on_signals():
            return grade_job(job, out_dir, options, runners=runners)
    assignment = course.load(job.assignment)
    spec = {"assignment": job.assignment, "submission": os.path.abspath(job.source), "out": os.path.abspath(out_dir),
            "name": job.name, "options": with_term_secret(job.options.over(options)).to_json()}
    limit = assignment.submission_timeout + HARD_LIMIT_MARGIN
    problem = ""
    alone = permissions.graded_alone() if runners.isolation.mode == "permissions" else contextlib.nullcontext()
    with alone:
        if runners.stopping:  # while it waited for the submission graded before it: not graded at all
            trees.remove(out_dir)
            return None
        with open(out_dir / "runner.log", "wb") as log:
            process = runners.start(spec, log)
        try:
            process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            problem = f"grading did not finish within {limit:g} s"
        runners.finish(process)
    if not problem and process.returncode != 0:
        problem = ("the grader was stopped" if runners.stopping
                   else f"the grading process failed (exit status {process.returncode})")
    if problem:
        _log_end(out_dir / "runner.log", problem)
    results = read_results(results_file)
    if results is None and runners.stopping:  # stopped before it listed its tests: not graded at all
        trees.remove(out_dir)
        return None
    if results is None or problem:
        results = completed(results, job, problem or "no results were written")
        results.write(out_dir)
    return results


def with_term_secret(options: GradingOptions) -> GradingOptions:
    """``options`` with the term's secret from this process's ``AUTOGRADER_SECRET`` where they set none (a cluster's
    driver sends its own: a worker does not have the driver's environment)."""
    if options.secret is not None or os.environ.get(SECRET_ENV) is None:
        return options
    return dataclasses.replace(options, secret=os.environ[SECRET_ENV])


def _log_end(log: Path, problem: str) -> None:
    """Say at the end of a runner's log what the batch saw of it: a runner that ended before it could print (killed,
    or an interpreter that failed as it started) left the log empty, where the feedback sends staff to look."""
    with contextlib.suppress(OSError), open(log, "a") as handle:
        silent = handle.tell() == 0
        handle.write(f"autograder: {problem}" + (", having written nothing here" if silent else "") + "\n")


def not_graded(job: Job, out_dir: Path, problem: str = "") -> Results:
    """The results of a job that cannot be graded at all (``problem``, its own, or an unknown assignment), written
    into ``out_dir``."""
    known = ", ".join(f"{n} ({', '.join(course.load(n).files)})" for n in course.names())
    problem = problem or job.problem or (f"could not tell which assignment this is; a submission holds the files of "
                                         f"one of: {known}. Pass --assignment NAME to grade it anyway")
    # One line: the problem quotes file names, and a newline in one would start a heading of its own.
    results = Results(assignment=job.assignment or "unknown", submission=job.name,
                      output=f"Your submission could not be graded: {sinks.line(problem)}.")
    results.set_status(Status.NOT_GRADED, problem)
    results.write(out_dir)
    return results


def completed(results: Results | None, job: Job, problem: str) -> Results:
    """The results of a runner that did not finish: what it wrote (every collected test, the unfinished at zero)
    and a note that says so."""
    results = results or Results(assignment=job.assignment, submission=job.name)
    note = (f"The grader could not finish this submission ({problem}); the scores below are those of the tests "
            "that finished, and the others count zero. The course staff can see runner.log.")
    results.output = f"{results.output}\n\n{note}".strip()
    results.set_status(Status.INCOMPLETE, problem)
    for test in results.tests:
        if test.extra_data.get("pending"):
            test.output = f"Not run: {problem}."
    if not results.tests:
        results.tests.append(TestResult(name="Grading", number="0", score=0, max_score=0, status="failed",
                                        output=note))
    return results



