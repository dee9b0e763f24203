"""Grading on Gradescope: submission metadata, what students may see and when, and the driver that the
autograder zip's ``run_autograder`` starts.

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

Visibility, as Gradescope defines it: ``visible`` is always shown, ``after_due_date`` once the due date
has passed, ``after_published`` once grades are published, ``hidden`` never. Gradescope applies it per
test, but the top-level ``output`` is always shown, so with metadata it gets a summary of what students
may see now (a submission made after the due date already sees ``after_due_date`` tests) and only the
count and points of what is withheld. Publication cannot be known at grading time, so ``after_published``
tests are always summarised as withheld.

The worker starts with ``python -I`` (no ``PYTHONPATH``): setup puts ``source/`` on the interpreter's path with
a ``.pth`` file (``install_runtime``). The worker imports what it needs from there as root, before it confines
itself; the sandbox uid it then runs as cannot read ``source/``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import shutil
import signal
import sys
import sysconfig
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from autograder import container, course, scratch, sinks
from autograder.batch.discovery import Job
from autograder.batch.jobs import grade_job
from autograder.grading_options import GradingOptions
from autograder.results import STOPPED, Results, Status, TestResult, points
from autograder.sandbox import cgroups

log = logging.getLogger("autograder.gradescope")

DEFAULT_ROOT = Path("/autograder")
RUNTIME_PTH = "autograder-runtime.pth"
EXPORT_DEPTH = 3  # how many folders above a submission may hold Gradescope's submission_metadata.yml
STOP_MARGIN = 30  # seconds before its budget at which the driver stops the grading itself (``run``)
SKIP_TAGS_ENV = "AUTOGRADER_SKIP_TAGS"  # tags of tests not to run, comma-separated: CI's cheap simulations only


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
