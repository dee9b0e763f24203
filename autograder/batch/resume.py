"""What ``autograder grade --resume OUT`` leaves out: the submissions that already have a final grade in ``OUT``,
matched by what they hold, not by their name.

A submission's content is the digest of its staged files (``submission.digest``), which the runner records in its
results (``extra_data["content"]``) before the student's code runs. Here each job is staged the same way, in a folder
of the command's own, and its digest looked up among the final grades of the folder (``gradebook.scored``): a
submission renamed, re-zipped or moved is not graded again; one whose files changed, or whose grading stopped, ran
out of time or failed, is. Staging reads the submission as the runner would, within the same bounds."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course, scratch, trees
from autograder.batch.discovery import Job
from autograder.batch.gradebook import scored
from autograder.results import Results
from autograder.submission import SubmissionError, digest, stage

log = logging.getLogger("autograder.batch.resume")


@dataclass
class Plan:
    """``todo``: the jobs to grade; ``kept``: the job whose submission each kept final grade is, by the results'
    name in the folder (a renamed submission keeps its earlier name); ``stale``: the names of unfinished results
    whose submission is graded again under another name (their folders are removed: one result per submission)."""

    todo: list[Job] = field(default_factory=list)
    kept: dict[str, Job] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)


def content(job: Job, workdir: Path) -> str | None:
    """The digest of ``job``'s staged files (staged into the new folder ``workdir``, removed after); None for a job
    that staging refuses (the runner says why) or that has no assignment."""
    if job.problem or job.assignment is None:
        return None
    assignment = course.load(job.assignment)
    try:
        return digest(stage(job.source, assignment.files, workdir, assignment.carried))
    except (SubmissionError, OSError):
        return None
    finally:
        trees.remove(workdir)


def plan(jobs: list[Job], earlier: list[Results]) -> Plan:
    """Which of ``jobs`` to grade, given the ``earlier`` results of the folder (``Plan``)."""
    finals: dict[str, list[str]] = {}  # a content -> the names of its final grades (two students may hand in alike)
    for results in earlier:
        if scored(results) and results.extra_data.get("content"):
            finals.setdefault(results.extra_data["content"], []).append(results.submission)
    unfinished = {results.submission: results.extra_data.get("content") for results in earlier if not scored(results)}
    result = Plan()
    with scratch.folder("resume") as temp:
        digests = {job.name: content(job, temp / str(index)) for index, job in enumerate(jobs)}
    for same_name in (True, False):  # its own name's grade first, then any other of the same content not yet kept
        for job in jobs:
            names = [name for name in finals.get(digests[job.name] or "", []) if name not in result.kept]
            found = [name for name in names if name == job.name or not same_name]
            if job not in result.kept.values() and found:
                result.kept[found[0]] = job
    result.todo = [job for job in jobs if job not in result.kept.values()]
    graded = {digests[job.name]: job.name for job in result.todo if digests[job.name]}
    result.stale = [name for name, key in unfinished.items() if key in graded and graded[key] != name]
    return result
