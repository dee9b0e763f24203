"""Grading one job in a runner process of its own (``python -m autograder.grading.runner``, its job on stdin), so that
a submission that brings its grading process down cannot affect the others; without namespaces, one at a time
(``permissions.graded_alone``). When a runner dies or overruns its hard limit, the batch completes its results file
itself (``completed``): every test the runner collected is listed, the unfinished ones at zero, so the maximum does
not shrink."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path

from autograder import course, sinks, trees
from autograder.batch.discovery import Job
from autograder.batch.runners import Runners
from autograder.course import SECRET_ENV
from autograder.results import Results, Status, TestResult
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation

HARD_LIMIT_MARGIN = 120.0


def grade_job(job: Job, out_dir: Path, *, public_only: bool = False, oracle: str = "auto",
              skip_tags: tuple[str, ...] | list[str] = (), runners: Runners | None = None,
              secret: str | None = None) -> Results | None:
    """Grade one job in its own runner process into ``out_dir``; a results file is written whatever happens, unless
    the batch was stopped before the runner listed its tests (then nothing, and None).

    Tests tagged with one of ``skip_tags`` or the job's own are not run; ``runners`` are the batch's runners (a lone
    job gets its own); ``secret`` the term's hidden seed (default: ``AUTOGRADER_SECRET`` where it is set; a job's own
    ``secret`` wins over both).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    results_file = out_dir / "results.json"
    results_file.unlink(missing_ok=True)
    if job.problem or job.assignment is None:
        return not_graded(job, out_dir)
    if runners is None:
        runners = Runners(Isolation.detect())
        with runners.stop_on_signals():
            return grade_job(job, out_dir, public_only=public_only, oracle=oracle, skip_tags=skip_tags,
                             runners=runners, secret=secret)
    assignment = course.load(job.assignment)
    tags = list(dict.fromkeys((*skip_tags, *job.skip_tags)))
    spec = {"assignment": job.assignment, "submission": os.path.abspath(job.source), "out": os.path.abspath(out_dir),
            "name": job.name, "oracle": job.oracle or oracle, "public_only": public_only or job.public_only,
            "hidden_only": job.hidden_only, "skip_tags": tags}
    secret = next((s for s in (job.secret, secret, os.environ.get(SECRET_ENV)) if s is not None), None)
    if secret is not None:
        spec["secret"] = secret
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


def read_results(path: Path) -> Results | None:
    """A results.json file, or None when it is missing or unreadable."""
    try:
        return Results.from_gradescope(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None



