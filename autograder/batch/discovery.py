"""Finding the submissions in the paths given to ``grade`` (``discover``), each a ``Job``.

A path given on the command line is a submission when it is a zip or holds some assignment's files; otherwise it is a
folder of submissions and is searched (to a few levels) for them. Links are never followed inside a submission,
detection included; among submissions only a link into the repository's own solutions or skeletons is (the bundled
examples use them).

A zip given on the command line may be Gradescope's "Export Submissions" as downloaded: ``submission_<id>/`` folders
beside a ``submission_metadata.yml`` at its top (or inside its one top folder). It is extracted, with the bounds of
every zip (``submission.extract_zip``, with a class's limits), into a folder the command owns (``discovered``), and
each submission in it is a job, found under that folder as under an unzipped export. A zip anywhere else is one
student's: one that holds an export, or the files of several submissions (an assignment's own files in folders
neither of which holds the other), is refused with the reason, never graded as the first submission it holds."""

from __future__ import annotations

import contextlib
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder import course, scratch, trees
from autograder.submission import (
    EXPORT_BYTES,
    EXPORT_FILES,
    JUNK,
    MAX_FILES,
    SubmissionError,
    extract_zip,
    open_zip,
    unreadable_zip,
)

SEARCH_DEPTH = 3
EXPORT_METADATA = "submission_metadata.yml"  # at the top of Gradescope's "Export Submissions"
EXPORT_FOLDER = "submission_"  # how each submission's folder in an export is named (``submission_<id>``)


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
    """The assignment a submission (a folder or zip) is for, decided by the files it holds (``_assignment_among``)."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            present = {entry[-1] for entry in _zip_entries(path)}
        except (zipfile.BadZipFile, OSError, SubmissionError):
            return None
    elif path.is_dir():
        present = {p.name for p in _files(path, SEARCH_DEPTH)}
    else:
        return None
    return _assignment_among(present)


def _assignment_among(present: set[str]) -> str | None:
    """The assignment whose files are among the file names ``present``.

    Only an assignment's OWN files make it a candidate: a positions submission also holds the student's
    masking.py (carried), which must not make it look like a masking submission, and a masking submission
    is never taken for positions. Among candidates the one with the most of its required files present
    wins; a tie goes to the later assignment in course order, whose submission holds the earlier files too.
    """
    best, best_rank = None, None
    for name in course.names():
        assignment = course.load(name)
        if not set(assignment.own_files) & present:
            continue
        rank = (len(set(assignment.files) & present), assignment.order)
        if best_rank is None or rank >= best_rank:
            best, best_rank = name, rank
    return best


def _zip_entries(path: Path, max_files: int = MAX_FILES) -> list[tuple[str, ...]]:
    """The paths a zip holds, as parts, junk left out (``submission.JUNK``: what staging leaves out too); raises what
    ``open_zip`` raises."""
    with open_zip(path, max_files) as archive:
        names = archive.namelist()
    entries = [PurePosixPath(name.replace("\\", "/")).parts for name in names]
    return [parts for parts in entries if parts and not JUNK & set(parts)]


def export_prefix(entries: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """Where a zip's entries read as Gradescope's "Export Submissions": ``()`` when ``submission_metadata.yml`` and
    ``submission_*/`` folders are at its top, ``(TOP,)`` when they are inside its one top folder; None otherwise."""
    candidates = [()]
    if len({parts[0] for parts in entries}) == 1:
        candidates.append(entries[0][:1])
    for prefix in candidates:
        depth = len(prefix)
        inside = [parts[depth:] for parts in entries if parts[:depth] == prefix]
        if (EXPORT_METADATA,) in inside and any(len(p) > 1 and p[0].startswith(EXPORT_FOLDER) for p in inside):
            return prefix
    return None


def _several(entries: list[tuple[str, ...]], assignment: str) -> list[str]:
    """The folders of a zip that each hold every one of ``assignment``'s own files (a submission's), when there are
    several and neither of two holds the other; [] for one submission (a copy nested in a folder of it is the
    student's), or none (staging says what is missing)."""
    own = set(course.load(assignment).own_files)
    held: dict[tuple[str, ...], set[str]] = {}
    for parts in entries:
        if parts[-1] in own:
            held.setdefault(parts[:-1], set()).add(parts[-1])
    folders = {folder for folder, names in held.items() if names == own}
    outermost = [f for f in folders if not any(g != f and f[:len(g)] == g for g in folders)]
    return sorted("/".join(f) + "/" if f else "its top" for f in outermost) if len(outermost) > 1 else []


@contextlib.contextmanager
def discovered(paths: list[Path], forced: str | None = None) -> Iterator[list[Job]]:
    """``discover``'s jobs, with a folder of the command's own for the export zips given (removed afterwards: the
    jobs' sources in it are valid within the block only)."""
    with scratch.folder("export") as exports:
        yield discover(paths, forced, exports)


def discover(paths: list[Path], forced: str | None = None, exports: Path | None = None) -> list[Job]:
    """Expand command-line paths into jobs with unique names; ``UnreadablePath`` when one does not exist or cannot
    be read (checked for every path before any is searched, so that nothing is graded). ``exports``: an empty folder
    to extract the export zips given into (``discovered``); without it, an export zip is refused as it is."""
    paths = [Path(path) for path in paths]
    for path in paths:
        if not path.exists():
            raise UnreadablePath(f"{path} does not exist")
        if not os.access(path, os.R_OK | (os.X_OK if path.is_dir() else 0)):
            raise UnreadablePath(f"{path} cannot be read (permission denied)")
    jobs: list[Job] = []
    for index, path in enumerate(paths):
        root = _export(path, exports / str(index)) if exports is not None else None
        if isinstance(root, Job):
            found = [root]
        elif root is not None:  # an export, unzipped: its submissions, named by their folders
            found = _search(root, forced, depth=0) or [Job(_stem(path), path, forced, f"{path.name} is a Gradescope "
                                                           "export that holds no submission")]
            path = root  # the export's metadata is at the top of what was given
        else:
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


def _export(path: Path, into: Path) -> Path | Job | None:
    """A zip given that reads as Gradescope's export (``export_prefix``), extracted into the new folder ``into``: the
    folder holding its metadata; a ``Job`` that says why when it cannot be extracted; None for anything else."""
    if not (path.is_file() and path.suffix.lower() == ".zip"):
        return None
    try:
        prefix = export_prefix(_zip_entries(path, EXPORT_FILES))
    except (zipfile.BadZipFile, OSError):
        return None  # not a zip: ``_job`` says why, as for any zip
    except SubmissionError as exc:  # past even an export's bounds
        return Job(_stem(path), path, None, f"{path.name}: {exc}")
    if prefix is None:
        return None
    try:
        extract_zip(path, into, EXPORT_FILES, EXPORT_BYTES)
    except SubmissionError as exc:
        return Job(_stem(path), path, None, f"{path.name} reads as a Gradescope export but cannot be unpacked: {exc}")
    return into.joinpath(*prefix)


def _job(name: str, path: Path, forced: str | None) -> Job:
    """The job for a submission at ``path``; without ``forced``, what stops detection is said first (a zip that is
    not one, an empty folder), else the detected assignment (with ``forced``, the runner lists every test at zero
    and says why). A zip whose layout reads as an export or as several submissions is refused with the reason."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            entries = _zip_entries(path)
        except (zipfile.BadZipFile, OSError) as exc:
            return Job(name, path, forced, "" if forced else unreadable_zip(path, exc))
        except SubmissionError as exc:
            return Job(name, path, forced, "" if forced else f"{path.name}: {exc}")
        assignment = forced or _assignment_among({parts[-1] for parts in entries})
        if export_prefix(entries) is not None:
            return Job(name, path, assignment, f"{path.name} is a Gradescope export (submission_* folders and a "
                                               f"{EXPORT_METADATA}), not one submission: give the export itself to "
                                               "`autograder grade`, as its own path")
        several = _several(entries, assignment) if assignment else []
        if several:
            shown = ", ".join(several[:5]) + (", ..." if len(several) > 5 else "")
            return Job(name, path, assignment, f"{path.name} holds the files of {len(several)} submissions ({shown}) "
                                               f"and no {EXPORT_METADATA} at its top, so it reads neither as one "
                                               "submission nor as a Gradescope export: hand in one submission's "
                                               "files, or give each submission (or the export as Gradescope wrote "
                                               "it) to `autograder grade`")
        return Job(name, path, assignment)
    if forced:
        return Job(name, path, forced)
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



