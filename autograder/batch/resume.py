"""What ``autograder grade --resume OUT`` leaves out: the submissions that already have a final grade in ``OUT``,
matched by what they hold.

A submission's content is the digest of its staged files (``submission.digest``), which the runner records in its
results (``extra_data["content"]``) before the student's code runs. Here each job is staged the same way, in a folder
of the command's own, and its digest compared with the final grades of the folder (``gradebook.scored``). A result
keeps the submission, and so the students, it was graded for: a job whose own name has a final grade of the same files
is not graded again; one whose files match a final grade under another name (a renamed zip, or a student who handed in
another's files) gets a result of its own, under its own name, with that verdict (``copy``): content only spares the
grading, it never moves a grade from one name to another. Anything else is graded: new files, changed files, or a
grading that stopped, ran out of time or failed. Staging reads the submission as the runner would, within the same
bounds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course, scratch, trees
from autograder.batch.discovery import Job
from autograder.batch.gradebook import scored
from autograder.results import Results
from autograder.submission import SubmissionError, digest, stage


@dataclass
class Plan:
    """``todo``: the jobs to grade; ``kept``: the names of the jobs whose own final grade is of the same files;
    ``copied``: by a job's name, the final grade of the same files under another name, whose verdict becomes the job's
    own result (``copy``)."""

    todo: list[Job] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    copied: dict[str, Results] = field(default_factory=dict)


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
    finals = {results.submission: results for results in earlier
              if scored(results) and results.extra_data.get("content")}
    by_content: dict[str, Results] = {}  # the first final grade of each content, by name
    for name in sorted(finals):
        by_content.setdefault(finals[name].extra_data["content"], finals[name])
    result = Plan()
    with scratch.folder("resume") as temp:
        digests = {job.name: content(job, temp / str(index)) for index, job in enumerate(jobs)}
    for job in jobs:
        key = digests[job.name]
        own = finals.get(job.name)
        if key and own is not None and own.extra_data["content"] == key:
            result.kept.append(job.name)
        elif key and key in by_content:
            result.copied[job.name] = by_content[key]
        else:
            result.todo.append(job)
    return result


def copy(out: Path, name: str, verdict: Results) -> None:
    """Write into ``out/name`` (replacing what an earlier grading under that name left) a result of its own for the
    submission ``name``, whose files are those ``verdict`` graded: its scores and feedback, under its own name. The
    runner's log says where it came from (for staff: the feedback names no one else)."""
    folder = out / name
    trees.remove(folder)
    dataclasses.replace(verdict, submission=name).write(folder)
    (folder / "runner.log").write_text(f"autograder: not graded again: its staged files are those of the final grade "
                                       f"{verdict.submission!r} in this folder (--resume), whose verdict this is\n")
