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
neither of which holds the other), is refused with the reason, never graded as the first submission it holds. So is a
folder of an export (``submission_<id>/``, one student's) that holds several submissions.

A job's name is its results folder's (``out/<name>/``) and its gradebook row's, so a submission's name never decides
where the batch's own files go (``folder_name``): it holds letters, digits, ``-`` and ``_`` only, never a ``.``, and
every file a batch writes at the top of its results folder has an extension (``gradebook.csv``, ``summary.md``,
``report.html``, and whatever it writes later): ``gradebook.csv.zip`` is graded as ``gradebook_csv``. Names that a
file system could take for one another (case, Unicode normalisation) are told apart with ``-2``, ``-3``."""

from __future__ import annotations

import contextlib
import os
import re
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder import course, scratch, trees
from autograder.grading_options import GradingOptions
from autograder.submission import (
    EXPORT_BYTES,
    EXPORT_FILES,
    JUNK,
    MAX_DEPTH,
    MAX_FILES,
    SubmissionError,
    extract_zip,
    open_zip,
    unreadable_zip,
)

SEARCH_DEPTH = 3
EXPORT_METADATA = "submission_metadata.yml"  # at the top of Gradescope's "Export Submissions"
EXPORT_FOLDER = "submission_"  # how each submission's folder in an export is named (``submission_<id>``)
NAME_BYTES = 150  # of a results folder's name, in UTF-8 (file systems allow 255; room left for a ``-N``)
UNNAMED = "submission"  # a name that keeps nothing (all punctuation)


class UnreadablePath(Exception):
    """A path given to ``grade`` does not exist or cannot be read: nothing is graded (the message says which)."""



@dataclass
class Job:
    """One submission to grade; ``options``: its own grading options, over the batch's (``GradingOptions.over``:
    ``autograder validate`` grades its whole matrix in one batch, the hidden tests under fresh secrets, some subjects
    with public tests replayed, mutants without their slow tests). Its results go to ``out/name``: ``discover`` names a
    submission (``folder_name``); validate's own jobs are named with folders (``out/masking/graded/reference``).
    ``given``: the path given to the command that it was found under; what lies below it and above the submission is
    the student's (``gradescope_metadata.students`` reads an export's metadata only at or above it)."""

    name: str
    source: Path
    assignment: str | None
    problem: str = ""
    options: GradingOptions = GradingOptions()
    given: Path | None = None


def assignment_of(path: Path) -> str | None:
    """The assignment a submission (a folder or zip) is for, decided by the files it holds (``_assignment_among``)."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            present = {entry[-1] for entry in _zip_entries(path)}
        except (zipfile.BadZipFile, OSError, SubmissionError):
            return None
    elif path.is_dir():
        present = {p.name for p in _files(path, MAX_DEPTH)}
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
    taken: set[str] = set()
    for job in jobs:
        job.name = folder_name(job.name, taken)
    return jobs


def folder_name(name: str, taken: set[str]) -> str:
    """The results folder's name for a submission called ``name`` (the module docstring says why), added to ``taken``
    (the names given so far, as file systems compare them: case-folded): in Unicode's compatibility form (NFKC), each
    run of characters other than letters, digits, ``-`` and ``_`` as one ``_``, at most ``NAME_BYTES``, and ``-2``,
    ``-3``... after a name taken already."""
    base = re.sub(r"[^\w-]+", "_", unicodedata.normalize("NFKC", name)).strip("_-") or UNNAMED
    while len(base.encode()) > NAME_BYTES:
        base = base[:-1]
    chosen, count = base, 1
    while chosen.casefold() in taken:
        count += 1
        chosen = f"{base}-{count}"
    taken.add(chosen.casefold())
    return chosen


def _search(path: Path, forced: str | None, depth: int, prefix: str = "") -> list[Job]:
    """The submissions at or under ``path``; in a folder that holds an export's metadata (Gradescope's export,
    unzipped), each ``submission_<id>/`` folder is one student's, so one submission, whatever it holds (``_job``
    refuses it when that is several)."""
    if _is_submission(path, forced):
        return [_job(prefix + _stem(path), path, forced)]
    if not path.is_dir() or depth >= SEARCH_DEPTH:
        return []
    export = _regular(path / EXPORT_METADATA)
    inner = f"{prefix}{path.name}-" if depth > 0 else prefix
    jobs = []
    for child in sorted(path.iterdir()):
        if child.name.startswith(".") or child.name in ("__pycache__", "__MACOSX") or not _followable(child):
            continue
        if export and child.name.startswith(EXPORT_FOLDER) and child.is_dir() and not child.is_symlink():
            jobs.append(_job(inner + child.name, child, forced, exported=True))
        else:
            jobs += _search(child, forced, depth + 1, inner)
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


def _job(name: str, path: Path, forced: str | None, exported: bool = False) -> Job:
    """The job for a submission at ``path``; without ``forced``, what stops detection is said first (a zip that is
    not one, an empty folder), else the detected assignment (with ``forced``, the runner lists every test at zero
    and says why). A zip whose layout reads as an export, or a zip or folder that holds several submissions, is
    refused with the reason; ``exported``: the folder is one student's in an export (``submission_<id>/``)."""
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            entries = _zip_entries(path)
        except (zipfile.BadZipFile, OSError) as exc:
            return Job(name, path, forced, "" if forced else unreadable_zip(path, exc))
        except SubmissionError as exc:
            return Job(name, path, forced, "" if forced else f"{path.name}: {exc}")
        if export_prefix(entries) is not None:
            return Job(name, path, forced or _assignment_among({parts[-1] for parts in entries}),
                       f"{path.name} is a Gradescope export (submission_* folders and a {EXPORT_METADATA}), not one "
                       "submission: give the export itself to `autograder grade`, as its own path")
    elif path.is_dir():
        entries = [parts for file in _files(path, MAX_DEPTH) if not JUNK & set(parts := file.relative_to(path).parts)]
        if not entries and not forced:
            return Job(name, path, None, f"{path.name} holds no files; a submission is a folder or zip holding one "
                                         "assignment's files (`autograder list` names them)")
    else:
        return Job(name, path, forced)  # not a zip: staging says so (without ``forced``, no assignment: the runner)
    assignment = forced or _assignment_among({parts[-1] for parts in entries})
    several = _several(entries, assignment) if assignment else []
    if several:
        shown = ", ".join(several[:5]) + (", ..." if len(several) > 5 else "")
        why = (f"it is one student's folder of a Gradescope export, so one submission: grade the one that counts "
               f"by its own path (`autograder grade {path.name}/{several[0]}`)" if exported else
               f"no {EXPORT_METADATA} at its top, so it reads neither as one submission nor as a Gradescope export: "
               "hand in one submission's files, or give each submission (or the export as Gradescope wrote it) to "
               "`autograder grade`")
        return Job(name, path, assignment, f"{path.name} holds the files of {len(several)} submissions ({shown})"
                                           f"{':' if exported else ' and'} {why}")
    return Job(name, path, assignment)


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



