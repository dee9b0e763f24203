"""The one owner of a results folder (``autograder grade --out``, ``report``): what a grading may do to the folder
(``prepare``: ``--resume`` and ``--force``), and its own files, written once from every result in it (``write``).

An engine writes only each submission's folder (``out/<name>/``, through ``Results.write``) and returns the results;
the folder's gradebooks (``gradebook.csv``, ``gradebook-<assignment>.csv`` with who made each submission,
``manual_answers.csv``), summary and class report (``report.html``) are written here, in that order, from every result
the folder holds, not only the submissions graded this time: one folder, one gradebook, one report.
The report is passed in as its writer (``report``: ``autograder.report.page.write``) rather than imported: the report
lies above this layer (it plots, and compares code with copydetect), and a writer passed in keeps it there while this
module alone decides when the folder's files are written, and from which results."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from autograder import sinks
from autograder.batch import resume
from autograder.batch.discovery import Job
from autograder.batch.gradebook import results_in, write_batch
from autograder.gradescope_metadata import Submitter, keep_students, recalled_students, students
from autograder.results import Results

# The class report's writer (``autograder.report.page.write``): the folder, every result in it, and the code of each
# submission given now by name (its similarity check); returns the page's path.
ReportWriter = Callable[[Path, list[Results], dict[str, Path]], Path]

log = logging.getLogger("autograder")


class FolderError(Exception):
    """The folder may not be graded into as asked; the message says what to do instead."""


def prepare(out: Path, jobs: list[Job], *, resuming: bool = False, force: bool = False) -> resume.Plan:
    """What to grade of ``jobs`` into ``out``: all of them, or with ``resuming`` those without a final grade there
    (``resume.plan``; a final grade of the same files under another name is copied as the job's own here). A folder
    that holds the results of other submissions is refused (``FolderError``) unless ``force`` or ``resuming``: its
    gradebooks would list them too."""
    earlier = results_in(out)
    plan = resume.plan(jobs, earlier) if resuming else resume.Plan(todo=list(jobs))
    others = sorted({results.submission for results in earlier} - {job.name for job in jobs})
    if others and not (force or resuming):
        raise FolderError(f"{out} holds the results of {len(others)} other submission(s) ({_names(others)}): grade "
                          "into an empty folder, add --force to grade into this one anyway (its gradebooks and report "
                          f"then list them too), or --resume {out} to grade only what has no final grade there")
    if resuming:
        for name, verdict in plan.copied.items():
            resume.copy(out, name, verdict)
            log.info("%s: the same files as the final grade %s there: its verdict copied as its own, not graded "
                     "again", sinks.line(name), sinks.line(verdict.submission))
        log.info("resuming %s: of %d submission(s), %d have a final grade there%s; grading %d", out, len(jobs),
                 len(plan.kept), f", {len(plan.copied)} the files of another's (its verdict copied as theirs)"
                 if plan.copied else "", len(plan.todo))
    if others:
        log.info("%s also holds the results of %d submission(s) not given now; the gradebooks and report list them "
                 "too: %s", out, len(others), _names(others))
    return plan


def write(out: Path, jobs: list[Job] | tuple[Job, ...] = (), unstarted: list[str] | tuple[str, ...] = (),
          report: ReportWriter | None = None) -> list[Results]:
    """Write the folder's files from every result in ``out``, once each: the gradebooks and summary
    (``gradebook.write_batch``), then the class report with ``report`` where the folder holds any result; return
    those results (by name). ``jobs``: the submissions given now (where each came from: who made it, ``who_made``, and
    its code for the report); ``unstarted``: the submissions a stop left without results (the summary names them)."""
    everything = results_in(out)
    write_batch(everything, out, unstarted, who_made(out, everything, jobs) if everything else None)
    if everything and report is not None:
        report(out, everything, {job.name: job.source for job in jobs})
    return everything


def who_made(out: Path, collected: list[Results], jobs: list[Job] | tuple[Job, ...] = ()
             ) -> dict[str, tuple[Submitter, ...]]:
    """Who made each of the submissions whose results in ``out`` are ``collected``, by name, for the per-assignment
    gradebooks: Gradescope's export metadata found with a job's submission, at or above the path the command was given
    (``gradescope_metadata.students``, ``Job.given``), kept beside its results; recalled from there for the others, so
    that a folder written again without its sources still names all."""
    who = {job.name: students(job.source, given=job.given) for job in jobs}
    for results in collected:
        if results.submission in who:
            keep_students(out / results.submission, who[results.submission])
        else:
            who[results.submission] = recalled_students(out / results.submission)
    return who


def _names(names: list[str], shown: int = 10) -> str:
    return ", ".join(sinks.line(name) for name in names[:shown]) + (", ..." if len(names) > shown else "")
