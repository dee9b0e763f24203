"""The one owner of a results folder (``autograder grade --out``, ``report``): what a grading may do to the folder
(``prepare``: ``--resume`` and ``--force``), and its own files, written once from every result in it (``write``).

An engine writes only each submission's folder (``out/<name>/``, through ``Results.write``) and returns the results;
the folder's gradebooks (``gradebook.csv``, ``gradebook-<assignment>.csv``, ``manual_answers.csv``) and summary are
written here, from every result the folder holds, not only the submissions graded this time: one folder, one
gradebook. The class report (``autograder.report.page``) is written by the command after these, from the same
results (it lies above this layer: it plots, and reads Gradescope's metadata)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from autograder import sinks
from autograder.batch import resume
from autograder.batch.discovery import Job
from autograder.batch.gradebook import results_in, write_batch
from autograder.results import Results

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


def write(out: Path, unstarted: list[str] | tuple[str, ...] = (),
          students: Callable[[list[Results]], dict] | None = None) -> list[Results]:
    """Write the folder's gradebooks and summary from every result in ``out``; return those results (by name).
    ``unstarted``: the submissions a stop left without results (the summary names them); ``students``: who made each
    of those results' submissions, by name (``autograder.report.page.students_of``), for the per-assignment
    gradebooks."""
    everything = results_in(out)
    write_batch(everything, out, unstarted, students(everything) if students and everything else None)
    return everything


def _names(names: list[str], shown: int = 10) -> str:
    return ", ".join(sinks.line(name) for name in names[:shown]) + (", ..." if len(names) > shown else "")
