"""Gradescope's metadata: who made a submission and when, and what students may see of its results now.

Two sources, both Gradescope's: ``submission_metadata.json`` beside ``/autograder/submission`` (``Metadata``: when,
which attempt, the due dates; read by the driver, ``autograder.gradescope``), and the ``submission_metadata.yml`` that
"Export Submissions" writes at the top of an export (``students``: who made each submission, for the staff's
per-assignment gradebooks only, never in results.json; kept beside each submission's results, ``keep_students``, so
that a results folder written again without the export still names them). The driver sits above the batch it runs;
this module sits below it, so that the batch's folder names students without importing the driver.

Visibility, as Gradescope defines it: ``visible`` is always shown, ``after_due_date`` once the due date
has passed, ``after_published`` once grades are published, ``hidden`` never. Gradescope applies it per
test, but the top-level ``output`` is always shown, so with metadata it gets a summary of what students
may see now (a submission made after the due date already sees ``after_due_date`` tests) and only the
count and points of what is withheld (``annotate``). Publication cannot be known at grading time, so
``after_published`` tests are always summarised as withheld.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from autograder import scratch
from autograder.results import Results, points

log = logging.getLogger("autograder.gradescope_metadata")

EXPORT_DEPTH = 3  # how many folders above a submission may hold Gradescope's submission_metadata.yml


class MetadataError(Exception):
    """``submission_metadata.json`` exists but cannot be understood."""


@dataclass(frozen=True)
class Submitter:
    """One submitter as Gradescope names them: for the course staff's gradebooks only, never in results.json."""

    name: str = ""
    email: str = ""
    id: str = ""


@dataclass
class Metadata:
    """What the grader uses from Gradescope's ``submission_metadata.json``."""

    submission_id: int | str | None = None
    submitted_at: datetime | None = None
    due_date: datetime | None = None
    late_due_date: datetime | None = None
    attempt: int = 1
    previous_best: float | None = None
    group_size: int = 1
    students: tuple[Submitter, ...] = ()

    @classmethod
    def read(cls, path: Path) -> Metadata:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            assignment = data.get("assignment") or {}
            previous = data.get("previous_submissions") or []
            scores = [float(p["score"]) for p in previous if isinstance(p, dict) and p.get("score") is not None]
            return cls(submission_id=data.get("id"), submitted_at=_time(data.get("created_at")),
                       due_date=_time(assignment.get("due_date")), late_due_date=_time(assignment.get("late_due_date")),
                       attempt=len(previous) + 1, previous_best=max(scores) if scores else None,
                       group_size=max(1, len(data.get("users") or [])),
                       students=tuple(_student(user) for user in data.get("users") or []))
        except (OSError, ValueError, TypeError, AttributeError, KeyError) as exc:
            raise MetadataError(f"{path} cannot be read ({type(exc).__name__}: {exc})") from None

    @property
    def past_due(self) -> bool:
        """Whether the submission was made after the due date (so ``after_due_date`` tests are shown)."""
        return bool(self.submitted_at and self.due_date and self.submitted_at > self.due_date)

    def shown(self) -> set[str]:
        """The visibilities students can see on this submission now."""
        return {"visible", "after_due_date"} if self.past_due else {"visible"}

    def extra_data(self) -> dict:
        """Harmless facts for instructors: when, which attempt, how late (no names or e-mail addresses)."""
        data = {"submitted_at": _iso(self.submitted_at), "attempt": self.attempt,
                "gradescope_submission_id": self.submission_id, "due_date": _iso(self.due_date),
                "late": self.past_due, "group_size": self.group_size, "previous_best_score": self.previous_best}
        if self.past_due:
            data["late_by_minutes"] = round((self.submitted_at - self.due_date).total_seconds() / 60, 1)
            data["after_late_due_date"] = bool(self.late_due_date and self.submitted_at > self.late_due_date)
        return data


def _student(user: dict) -> Submitter:
    """A submitter from the metadata's ``users`` (``name``, ``email``, ``id``) or from the export's ``:submitters:``
    (``:name:``, ``:email:``, ``:sid:``, the student id the course gave them); a value that is not text or a number
    names nothing."""
    user = {str(key).strip(":"): value for key, value in user.items()}
    return Submitter(name=_text(user.get("name")), email=_text(user.get("email")),
                     id=_text(user.get("sid") or user.get("id")))


def _text(value) -> str:
    return str(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else ""


def students(source: Path, *, given: Path | None) -> tuple[Submitter, ...]:
    """Who made the submission at ``source``, as Gradescope's "Export Submissions" says; () when it does not.

    Only the grader's side names anyone: the ``submission_metadata.yml`` the export writes at its top, keyed by the
    name of each submission's folder (``submission_<id>``), in a folder above the submission and at or above
    ``given``, the path the command was given (``Job.given``; None: the submission's own path): the folders between
    it and a submission found below it are the student's (files nested a folder down, beside a yml of their own), and
    the outermost within ``EXPORT_DEPTH`` decides. So is a ``submission_metadata.json`` in the submission: never read
    (Gradescope's own, beside
    ``/autograder/submission``, is ``run``'s, and names no one in results); the runner tells the student it was
    ignored. Metadata that cannot be read, or is past its bounds (``export_metadata``), is ignored with a warning:
    the gradebook then has no names for that export (or that submission), and its grades are unchanged.
    """
    source = Path(source)
    given = source if given is None else Path(given)
    try:
        for folder in reversed(list(source.parents)[:EXPORT_DEPTH]):
            if folder != given and folder not in given.parents:
                continue
            export = folder / "submission_metadata.yml"
            if export.is_file():
                key = Path(source.relative_to(folder).parts[0]).stem  # the export's folder (or zip) holding it
                found = export.stat()
                entry = export_metadata(export, found.st_mtime_ns, found.st_size).get(key) or {}
                return tuple(_student(user) for user in entry.get(":submitters") or entry.get("submitters") or [])
    except (OSError, AttributeError, TypeError) as exc:
        log.warning("ignoring the Gradescope metadata of %s: %s", source, exc)
    return ()


METADATA_BYTES = 32 << 20  # an export's submission_metadata.yml: a class of 5000 with 8 attempts each is 3 MB
METADATA_NODES = 1_000_000  # its values, lists and mappings as parsed (that class: 300,000, 200 MB, 20 s)
METADATA_DEPTH = 32  # levels of lists and mappings (an export's are 4)


class MetadataRefused(yaml.YAMLError):
    """An export's metadata is past its bounds (``export_metadata``)."""


if yaml.__with_libyaml__:  # libyaml's parser (PyYAML's wheels have it) under PyYAML's composer, that _Bounded counts
    from yaml.cyaml import CParser

    class _Parsed(yaml.composer.Composer, CParser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
        def __init__(self, stream):
            CParser.__init__(self, stream)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            yaml.composer.Composer.__init__(self)
else:
    _Parsed = yaml.SafeLoader


class _Bounded(_Parsed):
    """A safe loader that refuses, as it composes, a document past ``METADATA_NODES`` nodes or ``METADATA_DEPTH``
    levels, or one that its aliases make larger than ``METADATA_BYTES`` of plain YAML could be ("billion laughs": ten
    lines of nested aliases stand for a billion strings, which ``safe_load`` shares but anything that walks or prints
    them, ``str`` included, expands): each node weighs itself and its text, an alias what it stands for."""

    def __init__(self, stream):
        super().__init__(stream)
        self.weights: dict[int, int] = {}  # id of a node -> its weight, aliases expanded
        self.depth = 0

    def compose_node(self, parent, index):
        self.depth += 1
        if self.depth > METADATA_DEPTH:
            raise MetadataRefused(f"it is nested more than {METADATA_DEPTH} levels deep")
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        if id(node) not in self.weights:  # an alias is its node again, already weighed
            if len(self.weights) >= METADATA_NODES:
                raise MetadataRefused(f"it holds more than {METADATA_NODES} values")
            inner = node.value if isinstance(node.value, list) else []
            parts = [part for item in inner for part in (item if isinstance(item, tuple) else (item,))]
            weight = 1 + (len(node.value) if isinstance(node.value, str) else sum(self.weights[id(p)] for p in parts))
            if weight > METADATA_BYTES:
                raise MetadataRefused(f"its aliases expand it past {METADATA_BYTES >> 20} MB")
            self.weights[id(node)] = weight
        return node


@functools.lru_cache(maxsize=4)
def export_metadata(path: Path, modified: int, size: int) -> dict:
    """An export's ``submission_metadata.yml``, parsed once per version of the file (``modified``, ``size``), not
    once per submission: a class's export names hundreds of submissions. Bounded before it is read (``size``) and as
    it is parsed (``_Bounded``); whatever fails costs the export its names, said once, never the batch: {}."""
    try:
        if size > METADATA_BYTES:
            raise MetadataRefused(f"it is larger than {METADATA_BYTES >> 20} MB")
        with open(path, "rb") as handle:
            text = handle.read(METADATA_BYTES + 1)
        if len(text) > METADATA_BYTES:
            raise MetadataRefused(f"it is larger than {METADATA_BYTES >> 20} MB")
        data = yaml.load(text.decode("utf-8"), Loader=_Bounded) or {}  # noqa: S506 - a safe loader, bounded
        if not isinstance(data, dict):
            raise MetadataRefused("it is not a mapping of submissions")
        return data
    except (OSError, ValueError, yaml.YAMLError, RecursionError, MemoryError) as exc:
        log.warning("ignoring Gradescope's metadata %s (%s): the gradebooks name no student of its submissions; "
                    "their grades are unaffected", path, exc)
        return {}


STUDENTS_FILE = "students.json"  # beside a submission's results: who made it, for the staff's gradebooks only


def keep_students(folder: Path, found: tuple[Submitter, ...]) -> None:
    """Write who made the submission whose results are in ``folder`` (``students``) beside them, so that the results
    folder's gradebooks name them when it is written again without the submissions (``recalled_students``); no one
    found removes what an earlier grading under that name kept."""
    if not folder.is_dir():
        return
    if found:
        scratch.write_whole(folder / STUDENTS_FILE, json.dumps([vars(s) for s in found], indent=1))
    else:
        (folder / STUDENTS_FILE).unlink(missing_ok=True)


def recalled_students(folder: Path) -> tuple[Submitter, ...]:
    """Who ``keep_students`` wrote made the submission whose results are in ``folder``; () when nothing was kept or
    it cannot be read."""
    try:
        kept = json.loads((folder / STUDENTS_FILE).read_text(encoding="utf-8"))
        return tuple(Submitter(**{key: str(entry.get(key, "")) for key in ("name", "email", "id")}) for entry in kept)
    except (OSError, ValueError, TypeError, AttributeError):
        return ()


def _time(value) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def annotate(results: Results, metadata: Metadata) -> None:
    """Add what the metadata tells to finished results: the attempt, submission time and lateness in ``extra_data``,
    and before the top-level output (always shown) a summary of only what students may see now."""
    results.extra_data.update(metadata.extra_data())
    results.output = "\n\n".join(part for part in (student_summary(results, metadata), results.output) if part)


def student_summary(results: Results, metadata: Metadata) -> str:
    """The top-level lines students see now: the score on what is shown, and what is withheld until when."""
    shown = metadata.shown()
    graded = [t for t in results.tests if not t.extra_data.get("manual")]
    now = [t for t in graded if t.visibility in shown]
    scored = [t for t in now if t.max_score > 0]  # a 0-point test (a rules report) informs and is not counted
    lines = [f"Attempt {metadata.attempt}. Tests shown now: {points(sum(t.score for t in now))} / "
             f"{points(sum(t.max_score for t in now))} points ({sum(t.status == 'passed' for t in scored)} of "
             f"{len(scored)} passed)."]
    when = {"after_due_date": f"after the due date{_due(metadata)}", "after_published": "when grades are published"}
    for visibility, moment in when.items():
        withheld = [t for t in graded if t.visibility == visibility and visibility not in shown]
        if withheld:
            lines.append(f"{len(withheld)} more test(s) worth {sum(t.max_score for t in withheld):g} points were run; "
                         f"their results are shown {moment}.")
    if metadata.past_due:
        lines.append("This submission was made after the due date, so the tests shown after it are shown now.")
    return " ".join(lines[:1]) + ("\n\n" + "\n".join(lines[1:]) if lines[1:] else "")


def _due(metadata: Metadata) -> str:
    return f" ({metadata.due_date:%Y-%m-%d %H:%M %Z})".replace(" )", ")") if metadata.due_date else ""
