"""Finding the submissions in the paths given to ``grade`` (``discover``), each a ``Job``.

A path given on the command line is a submission when it is a zip or holds some assignment's files; otherwise it is a
folder of submissions and is searched (to a few levels) for them. Links are never followed inside a submission,
detection included; among submissions only a link into the repository's own solutions or skeletons is (the bundled
examples use them)."""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder import course, trees
from autograder.submission import MAX_FILES, SubmissionError, open_zip, unreadable_zip

SEARCH_DEPTH = 3


class UnreadablePath(Exception):
    """A path given to ``grade`` does not exist or cannot be read: nothing is graded (the message says which)."""



@dataclass
class Job:
    """One submission to grade; ``skip_tags``: tags of tests not to run for it (see ``runner.grade_one``); ``secret``:
    the hidden seed to grade under instead of the term's, with ``hidden_only`` (``autograder validate`` draws the
    hidden tests' inputs under fresh secrets); ``public_only`` and ``oracle``: the job's own, whatever the batch's
    (validate grades its whole matrix in one batch). ``name`` may hold folders: its results go to ``out/name``.
    ``given``: the path given to the command that it was found under; what lies below it and above the submission is
    the student's (``gradescope.students`` reads an export's metadata only at or above it)."""

    name: str
    source: Path
    assignment: str | None
    problem: str = ""
    skip_tags: tuple[str, ...] = ()
    secret: str | None = None
    hidden_only: bool = False
    public_only: bool = False
    oracle: str | None = None
    given: Path | None = None


def assignment_of(path: Path) -> str | None:
    """The assignment a submission (a folder or zip) is for, decided by the files it holds.

    Only an assignment's OWN files make it a candidate: a positions submission also holds the student's
    masking.py (carried), which must not make it look like a masking submission, and a masking submission
    is never taken for positions. Among candidates the one with the most of its required files present
    wins; a tie goes to the later assignment in course order, whose submission holds the earlier files too.
    """
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            with open_zip(path) as archive:
                present = {Path(n).name for n in archive.namelist()}
        except (zipfile.BadZipFile, OSError, SubmissionError):
            return None
    elif path.is_dir():
        present = {p.name for p in _files(path, SEARCH_DEPTH)}
    else:
        return None
    best, best_rank = None, None
    for name in course.names():
        assignment = course.load(name)
        if not set(assignment.own_files) & present:
            continue
        rank = (len(set(assignment.files) & present), assignment.order)
        if best_rank is None or rank >= best_rank:
            best, best_rank = name, rank
    return best


def discover(paths: list[Path], forced: str | None = None) -> list[Job]:
    """Expand command-line paths into jobs with unique names; ``UnreadablePath`` when one does not exist or cannot
    be read (checked for every path before any is searched, so that nothing is graded)."""
    paths = [Path(path) for path in paths]
    for path in paths:
        if not path.exists():
            raise UnreadablePath(f"{path} does not exist")
        if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
            raise UnreadablePath(f"{path} cannot be read (permission denied)")
    jobs: list[Job] = []
    for path in paths:
        found = _search(path, forced, depth=0)
        if not found:  # an explicit path is always graded, even when it holds nothing recognisable
            found = [_job(_stem(path), path, forced)]
        for job in found:
            job.given = path
        jobs += found
    seen: dict[str, int] = {}
    for job in jobs:
        count = seen.get(job.name, 0)
        seen[job.name] = count + 1
        if count:
            job.name = f"{job.name}-{count + 1}"
    return jobs


def _search(path: Path, forced: str | None, depth: int, prefix: str = "") -> list[Job]:
    if _is_submission(path, forced):
        return [_job(prefix + _stem(path), path, forced)]
    if not path.is_dir() or depth >= SEARCH_DEPTH:
        return []
    jobs = []
    for child in sorted(path.iterdir()):
        if not child.name.startswith(".") and child.name not in ("__pycache__", "__MACOSX") and _followable(child):
            jobs += _search(child, forced, depth + 1, f"{prefix}{path.name}-" if depth > 0 else prefix)
    return jobs


def _job(name: str, path: Path, forced: str | None) -> Job:
    """The job for a submission at ``path``; without ``forced``, what stops detection is said first (a zip that is
    not one, an empty folder), else the detected assignment (with ``forced``, the runner lists every test at zero
    and says why)."""
    if forced:
        return Job(name, path, forced)
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            open_zip(path).close()
        except (zipfile.BadZipFile, OSError) as exc:
            return Job(name, path, None, unreadable_zip(path, exc))
        except SubmissionError as exc:
            return Job(name, path, None, f"{path.name}: {exc}")
    if path.is_dir() and not _files(path, SEARCH_DEPTH):
        return Job(name, path, None, f"{path.name} holds no files; a submission is a folder or zip holding one "
                                     "assignment's files (`autograder list` names them)")
    return Job(name, path, assignment_of(path))


def _is_submission(path: Path, forced: str | None) -> bool:
    """A zip, or a folder holding (directly, not through a link) a required file of ``forced`` or of any
    assignment."""
    if path.is_file():
        return path.suffix.lower() == ".zip"
    names = [forced] if forced else course.names()
    return any(_regular(path / f) for name in names for f in course.load(name).files)


def _regular(path: Path) -> bool:
    """A regular file itself, not a link to one."""
    return not path.is_symlink() and path.is_file()


def _files(folder: Path, depth: int) -> list[Path]:
    """The regular files under ``folder`` down to ``depth`` levels, never through a link (a submission's own
    files decide what it is); no more than staging would read (``MAX_FILES`` entries)."""
    found = []
    for count, (level, entry) in enumerate(trees.walk(folder), start=1):
        if level > depth or count > MAX_FILES:
            break
        if entry.is_file(follow_symlinks=False):
            found.append(Path(entry.path))
    return found


def _followable(path: Path) -> bool:
    """Whether discovery may enter ``path``: not a link, or a link into the repository's own solutions or
    skeletons (the bundled examples' reference and skeleton)."""
    if not path.is_symlink():
        return True
    resolved = path.resolve()
    return any(resolved.is_relative_to(course.REPO_ROOT / tree) for tree in ("solutions", "assignments"))


def _stem(path: Path) -> str:
    return path.stem if path.is_file() else path.name



