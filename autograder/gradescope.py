"""Grading on Gradescope: the driver that the autograder zip's ``run_autograder`` starts.

Gradescope runs ``run_autograder`` as root in ``/autograder`` once per submission. The driver
(``python -m autograder.gradescope run --root /autograder --assignment NAME``) makes ``source/``
root-only and ``submission_metadata.json`` unreadable to others, then grades ``submission/`` with the
machinery of ``autograder grade``: one runner process, student code in the sandbox as an unprivileged
uid, ``results/results.json`` rewritten after every test, and a time budget (``--budget``: the measured
Gradescope timeout less a margin, ``autograder.container``) after which the shell script stops it. Whatever
fails, a results file that says so is written; the shell script writes a last one if Python itself cannot
start. When the container's memory or that budget ran out, the results say first that grading did not
finish and why, every test at zero, and the autograder output (the staff's) says which setting to raise
(``container.did_not_finish``). ``--root`` is what lets CI run it in a fake ``/autograder``.

What students may see of the results, by Gradescope's visibilities and the submission's metadata, is
``autograder.gradescope_metadata``'s (``annotate``).

The worker starts with ``python -I`` (no ``PYTHONPATH``): setup puts ``source/`` on the interpreter's path with
a ``.pth`` file (``install_runtime``). The worker imports what it needs from there as root, before it confines
itself; the sandbox uid it then runs as cannot read ``source/``.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import shutil
import signal
import sys
import sysconfig
import threading
from pathlib import Path

from autograder import container, course, scratch, sinks
from autograder.batch.discovery import Job
from autograder.batch.jobs import grade_job
from autograder.gradescope_metadata import Metadata, MetadataError, annotate
from autograder.grading_options import GradingOptions
from autograder.results import STOPPED, Results, Status, TestResult
from autograder.sandbox import cgroups

log = logging.getLogger("autograder.gradescope")

DEFAULT_ROOT = Path("/autograder")
RUNTIME_PTH = "autograder-runtime.pth"
STOP_MARGIN = 30  # seconds before its budget at which the driver stops the grading itself (``run``)
SKIP_TAGS_ENV = "AUTOGRADER_SKIP_TAGS"  # tags of tests not to run, comma-separated: CI's cheap simulations only


def lock_down(root: Path) -> None:
    """Make everything in ``root`` that student code must not read or write root-only.

    The sandbox hides these paths too where the machine allows mount namespaces; permissions are what
    protect them where it does not (Gradescope's harness runs as root, so it is unaffected).
    """
    for folder in ("source", "results", "submission"):
        if (root / folder).is_dir():
            os.chmod(root / folder, 0o700)
    metadata = root / "submission_metadata.json"
    if metadata.is_file():
        os.chmod(metadata, 0o600)


def run(root: Path, name: str, budget: int | None = None) -> Results:
    """Grade ``root/submission`` as assignment ``name``; ``root/results/results.json`` always exists afterwards.
    ``budget``: the seconds after which ``run_autograder`` stops the grading (a stop then is the container's time)."""
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    kills = cgroups.container_kills()
    # The grader stops itself STOP_MARGIN s before run_autograder's timeout would: stopping its runners and writing the
    # results took 20 s at half a CPU, past the 10 s that timeout leaves before it kills.
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        os.kill(os.getpid(), signal.SIGTERM)

    timer = threading.Timer(max(1, budget - STOP_MARGIN), stop) if budget else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        assignment = course.load(name)
        lock_down(root)
        metadata_file, label, metadata = root / "submission_metadata.json", "submission", None
        if metadata_file.is_file():
            try:
                metadata = Metadata.read(metadata_file)
                label = f"gradescope-{metadata.submission_id}" if metadata.submission_id else label
            except MetadataError as exc:
                log.warning("ignoring the submission metadata: %s", exc)
        skipped = tuple(tag for tag in os.environ.get(SKIP_TAGS_ENV, "").split(",") if tag)
        job = Job(label, root / "submission", assignment.name, options=GradingOptions(skip_tags=skipped))
        results = grade_job(job, results_dir)
        if results is None:  # stopped (the container's time) before a test was listed
            results = failure(name, STOPPED)
            results.set_status(Status.INCOMPLETE, STOPPED)
        elif metadata is not None:
            annotate(results, metadata)
        if timer is not None:
            timer.cancel()
        stopped = fired.is_set() or (results.status is Status.INCOMPLETE and results.reason.startswith(STOPPED))
        unfinished = _container_reason(results, name, budget if stopped else None, cgroups.container_kills() > kills)
        if unfinished is not None:
            container.did_not_finish(results, *unfinished)
            log.error("%s", unfinished[1])
        results.write(results_dir)
    except Exception as exc:  # the grader itself failed: the student still gets a results file
        log.exception("grading failed")
        results = failure(name, f"{type(exc).__name__}: {exc}")
        results.write(results_dir)
    return results


def _container_reason(results: Results, name: str, budget: int | None, killed: bool) -> tuple[str, str] | None:
    """(the student's words, the staff's) where the container, not the submission, ended the grading: its memory (a
    worker killed for it, ``cgroups.CONTAINER_OUT_OF_MEMORY``, or a process of the grader's killed in it: ``killed``)
    or its time (``budget``, given where the driver stopped the grading at it, or run_autograder's timeout stopped the
    grader); None where the grading finished. A grading stopped before it listed a test reads "graded" with none."""
    stated = container.settings(name)
    memory = results.status is Status.GRADER_FAILED and results.reason.startswith(cgroups.CONTAINER_OUT_OF_MEMORY)
    if memory or (killed and results.status is not Status.GRADED):
        group = cgroups.own_memory()
        return container.out_of_memory(cgroups.memory_limit(group) if group else None, stated)
    finished = results.status is Status.GRADED and results.tests and not any(
        test.extra_data.get("pending") for test in results.tests)
    if budget is not None and not finished:
        return container.out_of_time(budget, stated)
    return None


def failure(name: str, reason: str) -> Results:
    """The results of a submission the grader could not grade because of the grader itself."""
    note = ("The autograder failed before it could grade your submission; this is not your fault. The course "
            "staff can see what happened. Resubmit later, or tell the course staff if it happens again.")
    results = Results(assignment=name, submission="submission", output=note)
    results.set_status(Status.GRADER_FAILED, reason)
    results.tests.append(TestResult(name="Grading", number="0", score=0.0, max_score=0.0, status="failed",
                                    output=note))
    return results


def install_runtime(source: Path, site_packages: Path | None = None) -> Path:
    """Put the harness in ``source`` on the interpreter's path (a ``.pth`` file); returns the file written."""
    site = Path(site_packages or sysconfig.get_paths()["purelib"])
    pth = site / RUNTIME_PTH
    pth.write_text(f"{Path(source).resolve()}\n")
    return pth


def selftest(name: str) -> bool:
    """Grade the bundled reference in a scratch ``/autograder`` tree: full marks means the image works."""
    assignment = course.load(name)
    with scratch.folder("selftest") as root:
        os.chmod(root, 0o755)
        shutil.copytree(assignment.solution_dir, root / "submission")
        results = run(root, name)
    log.info("self-test: the reference scored %g / %g (%s)", results.score, results.max_score,
             results.extra_data.get("status", ""))
    for test in results.tests:
        if test.score < test.max_score:
            log.error("self-test: the reference fails %s: %s", test.name, test.output.strip()[:500])
    return results.max_score > 0 and results.score == results.max_score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.gradescope", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    grade = commands.add_parser("run", help="grade the submission in ROOT/submission (what run_autograder does)")
    grade.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="the /autograder folder (default /autograder)")
    grade.add_argument("--assignment", required=True)
    grade.add_argument("--budget", type=int, help="seconds after which run_autograder stops the grading")
    runtime = commands.add_parser("install-runtime", help="put the harness on the interpreter's path (setup.sh)")
    runtime.add_argument("--source", type=Path, required=True, help="the folder holding the autograder package")
    check = commands.add_parser("selftest", help="grade the bundled reference; fails unless it earns full marks")
    check.add_argument("--assignment", required=True)
    options = parser.parse_args(argv)
    sinks.log_to_terminal()
    if options.command == "install-runtime":
        log.info("runtime installed: %s", install_runtime(options.source))
        return 0
    if options.command == "selftest":
        return 0 if selftest(options.assignment) else 1
    results = run(options.root, options.assignment, options.budget)
    with contextlib.suppress(OSError):  # the log Gradescope shows to instructors only
        sys.stdout.write(results.feedback() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
