"""The hostile catalogue (``tests/hostile/``, see ``catalogue.py``) graded in one batch beside the references, once
with namespaces and once with permissions alone (``AUTOGRADER_NAMESPACES=0``): every case in both, but one whose
``MODES`` names one and says why that is enough (an attack on trusted code that runs the same in either mode).

Whatever an attack is, the batch must show: no point earned that should not be (each case's ``EXPECT``), no byte
of a secret (the canary of hidden files, the term's seed, a solution line, another submission's marker or name)
in what students see, no process or temporary file of a sandbox uid left afterwards, every collected test in every
results file, no failed test with its full points, the references' marks unchanged, and nothing a terminal obeys on
the batch's progress bar. A second checkout of the
course's hidden material lies on disk during the batch: world-readable with namespaces (the worker's file system
does not hold it) or Landlock (the worker's allow-list leaves it out), root-only with permissions alone (which protect
only what is not world-readable; docs/security.md).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import os
import secrets
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from rich.console import Console
from support.catalogue import Case, load, write_base
from support.machine import needs_root, private_tmp
from support.opened import formulas, headings, strong, unprintable
from support.submissions import REPO

from autograder import cli, course
from autograder.authoring import leaks
from autograder.batch import folder as batch_folder
from autograder.batch import gradebook
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.gradescope_metadata import students
from autograder.grading_options import GradingOptions
from autograder.results import Results
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation

pytestmark = [needs_root, pytest.mark.slow, pytest.mark.alone]
MODES = {"namespaces": "1", "permissions": "0"}
CASES = load()
# Written before and read after the others: a message between two submissions graded one after the other.
FIRST, LAST = "masking-drop_messages", "masking-read_messages"


@dataclass
class Graded:
    mode: str
    results: dict[str, Results]
    bases: dict[tuple[str, str], Results]
    out: Path
    processes: list[int] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    connections: list[bytes] = field(default_factory=list)
    datagrams: list[bytes] = field(default_factory=list)
    secret: str = ""
    terminal: str = ""  # what the batch wrote to stderr (the progress bar)
    folders: dict[str, Path] = field(default_factory=dict)  # each case's results folder, by label
    named: dict[str, tuple] = field(default_factory=dict)  # whom the gradebook would credit, by case


class Listener:
    """A TCP port on 127.0.0.1 that records what every connection sends, and the UDP port of the same number, every
    datagram."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.received: list[bytes] = []
        self.datagrams: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        while True:
            try:
                self.datagrams.append(self.udp.recv(1000))
            except OSError:
                return

    def close(self) -> None:
        self.server.close()
        self.udp.close()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                try:
                    self.received.append(connection.recv(1000))
                except OSError:
                    self.received.append(b"")


def _second_checkout(folder: Path, mode: str) -> Path:
    """A copy of the hidden material (solutions, hidden suites) elsewhere on disk, as a backup would be."""
    copy = folder / f"hostile-copy-{secrets.token_hex(4)}"
    shutil.copytree(REPO / "solutions", copy / "solutions")
    for hidden in (REPO / "autograder" / "suites").glob("*/hidden"):
        shutil.copytree(hidden, copy / "autograder" / "suites" / hidden.parent.name / "hidden")
    os.chmod(copy, 0o755 if mode == "namespaces" or Isolation.detect().landlock else 0o700)
    for path in copy.rglob("*"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return copy


def _leftovers(before: set[str], scratch: Path) -> list[str]:
    """What the batch's graders left in their TMPDIR (``scratch``, the test's own); what appeared in the world-writable
    folders during the batch and is a sandbox uid's; and the System V IPC objects of sandbox uids. The pool's uids are
    this test's alone where make test gives its process a pool of its own (``AUTOGRADER_UIDS``)."""
    found = [str(path) for path in scratch.iterdir()]
    for folder in permissions.WORLD_WRITABLE:
        for entry in os.scandir(folder):
            if entry.path not in before and entry.stat(follow_symlinks=False).st_uid in permissions.UID_POOL:
                found.append(entry.path)
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        header = lines[0].split()
        found += [f"sysv {kind} {line}" for line in lines[1:]
                  if int(dict(zip(header, line.split(), strict=False))["uid"]) in permissions.UID_POOL]
    return found


@pytest.fixture(scope="module", params=list(MODES))
def graded(request, tmp_path_factory) -> Graded:
    mode = request.param
    base = tmp_path_factory.mktemp(f"isolation-{mode}")
    copy = _second_checkout(Path("/tmp"), mode)
    listener = Listener()
    secret = f"term-secret-{secrets.token_hex(8)}"
    before = {entry.path for folder in permissions.WORLD_WRITABLE for entry in os.scandir(folder)}
    values = {"REPO": str(REPO), "COPY": str(copy), "PORT": str(listener.port)}
    submissions = base / "submissions"
    cases = [case for case in CASES if mode in case.modes and not case.handed_in]  # not an attack on the batch
    paths = [case.materialize(submissions, values) for case in cases]
    wanted = {(case.assignment, case.base) for case in cases} | {(name, "reference") for name in course.names()}
    base_paths = {key: write_base(*key, submissions / f"base-{key[0]}-{key[1].replace(':', '-')}") for key in wanted}
    ordered = sorted(paths, key=lambda p: (p.name != FIRST, p.name == LAST))
    jobs = [job for path in [*ordered[:1], *base_paths.values(), *ordered[1:]] for job in discover([path])]
    # A job's name is what discovery makes of the folder's (letters, digits, - and _: issue 41), not the folder's own.
    named_as = {case.label: discover([path])[0].name for case, path in zip(cases, paths, strict=True)}
    quick = {named_as[case.label] for case in cases if not case.runtime}
    retraining = {named_as[case.label] for case in cases if case.retraining}
    for job in jobs:
        job.options = GradingOptions(skip_tags=(*(("runtime",) if job.name in quick else ()),
                                                *(() if job.name in retraining else ("retraining",))))
    try:
        with pytest.MonkeyPatch.context() as patch, private_tmp() as scratch:
            patch.setenv("AUTOGRADER_NAMESPACES", MODES[mode])
            patch.setenv("AUTOGRADER_LOCK_FILES", "1")  # where permissions are all there is (no Landlock), they hold
            patch.setenv("AUTOGRADER_SECRET", secret)
            Isolation.detect.cache_clear()
            assert Isolation.detect().mode == mode
            terminal = io.StringIO()  # what the batch writes to the instructor's terminal: its progress bar
            with contextlib.redirect_stderr(terminal):
                collected = grade_all(jobs, base / "out", workers=2, progress=True)
            batch_folder.write(base / "out")  # the summary and gradebooks the command writes, checked below
            time.sleep(1.0)  # anything still alive would have written again by now
            processes = [pid for uid in permissions.UID_POOL for pid in permissions.processes_of(uid)]
            files = _leftovers(before, scratch)
    finally:
        Isolation.detect.cache_clear()
        shutil.rmtree(copy, ignore_errors=True)
        listener.close()
    results = {r.submission: r for r in collected}
    graded = Graded(mode=mode, results={c.label: results[named_as[c.label]] for c in cases},
                    bases={key: results[path.name] for key, path in base_paths.items()}, out=base / "out",
                    processes=processes, files=files, connections=list(listener.received),
                    datagrams=list(listener.datagrams), secret=secret, terminal=terminal.getvalue(),
                    folders={c.label: base / "out" / named_as[c.label] for c in cases},
                    named={case.label: students(path, given=path) for case, path in zip(cases, paths, strict=True)})
    _write_table(graded)
    return graded


def _write_table(graded: Graded) -> None:
    """The catalogue as a table (attack, class, outcome), beside the results: the closing note's source."""
    lines = ["| attack | class | score | status |", "|---|---|---|---|"]
    for case in (case for case in CASES if case.label in graded.results):
        r = graded.results[case.label]
        lines.append(f"| {case.label}: {case.title} | {case.kind} | {r.score:g} / {r.max_score:g} "
                     f"| {r.extra_data.get('status', '')[:80]} |")
    (graded.out / f"catalogue-{graded.mode}.md").write_text("\n".join(lines) + "\n")


def _results(graded: Graded, case: Case) -> Results:
    """``case``'s results in this mode; skipped, saying why, in a mode that does not grade it (its ``MODES``)."""
    if case.handed_in:
        pytest.skip(f"{case.label} attacks the batch: `autograder grade` grades it in a folder of its own (below)")
    if case.label not in graded.results:
        pytest.skip(f"{case.label} is graded with {' and '.join(case.modes)} only: {case.modes_why}")
    return graded.results[case.label]


def _numbers(results: Results) -> list[str]:
    """The numbers of every test collected for a submission: run, or skipped by tag."""
    return sorted([*(t.number for t in results.tests), *(t["number"] for t in results.extra_data.get("skipped", []))])


def _seen(results: Results) -> str:
    """What a student sees: every output (the results' and each test's)."""
    return "\n".join([results.output, *(t.output for t in results.tests)])


@pytest.fixture(scope="module")
def hidden() -> leaks.Secrets:
    return leaks.collect()


def test_the_catalogue_covers_every_class_and_assignment():
    assert len(CASES) >= 30
    assert {case.assignment for case in CASES} == set(course.names())
    assert len({case.kind for case in CASES}) >= 10


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_no_points_that_should_not_be(graded, case: Case):
    results = _results(graded, case)
    base = graded.bases[(case.assignment, case.base)]
    expected = {"zero": results.score == 0, "below": results.score < results.max_score,
                "full": results.score == results.max_score > 0, "base": results.score <= base.score, "any": True}
    assert expected[case.expect], (f"{case.label} ({graded.mode}): {results.score}/{results.max_score}, expected "
                                   f"{case.expect} (its base alone: {base.score})\n{_seen(results)[:3000]}")
    for test in results.tests:
        assert test.status == "passed" or test.score < test.max_score or test.max_score == 0, (
            f"{case.label}: failed test {test.number} kept its {test.max_score} points:\n{test.output[:2000]}")


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_every_results_file_lists_every_test(graded, case: Case):
    results = _results(graded, case)
    assert (graded.folders[case.label] / "results.json").is_file()
    if results.extra_data.get("status", "").startswith("not graded"):
        assert results.output, "a refused submission says why"
        return
    base = graded.bases[(case.assignment, case.base)]
    assert _numbers(results) == _numbers(base), case.label


@pytest.mark.parametrize("case", CASES, ids=[case.label for case in CASES])
def test_nothing_hidden_reaches_the_student(graded, hidden, case: Case):
    seen = _seen(_results(graded, case)) + (graded.folders[case.label] / "feedback.md").read_text()
    assert course.CANARY not in seen
    assert graded.secret not in seen
    for name in course.names():
        seed = course.load(name).hidden_dir / "SECRET"
        if seed.is_file():
            assert seed.read_text().strip() not in seen, f"{name}'s hidden seed"
    others = [c for c in CASES if c is not case]
    assert not [c.label for c in others if c.marker in seen or c.label in seen], "another submission's files"
    assert "forged-" not in seen
    if case.base == "skeleton":  # a submission built on the reference shows solution lines of its own
        assert not leaks.scan({"outputs.txt": seen.encode()}, hidden)
    for text in case.present:
        assert text in seen, f"{case.label} should say {text!r}"
    for text in case.absent:
        assert text not in seen, f"{case.label} should not say {text!r}"


def test_no_submission_names_its_author(graded):
    """Only the grader's side names students (an export's metadata, absent here): a submission's own metadata names
    no one (``forged_identity``)."""
    assert not {label: named for label, named in graded.named.items() if named}


def test_the_references_keep_their_marks(graded):
    for (name, base), results in graded.bases.items():
        if base == "reference":
            assert results.score == results.max_score > 0, (name, results.extra_data.get("status"))
        elif base == "skeleton":
            assert results.score == 0, name


def test_nothing_outlives_the_batch(graded):
    assert not graded.processes, f"processes of sandbox uids are still running: {graded.processes}"
    assert not graded.files, f"left behind: {graded.files}"


def test_no_network_with_namespaces_or_the_filter(graded):
    """Namespaces give the worker no network, the system-call filter no internet socket; Landlock (ABI 4) alone refuses
    TCP, not UDP."""
    if graded.mode == "namespaces" or Isolation.detect().seccomp:
        assert not graded.connections and not graded.datagrams, (graded.connections, graded.datagrams)
    elif Isolation.detect().landlock >= 4:
        assert not graded.connections, graded.connections


def test_results_files_hold_only_json_the_grader_wrote(graded):
    for label in graded.results:
        data = json.loads((graded.folders[label] / "results.json").read_text())
        assert data["score"] <= data["extra_data"]["max_score"]


def test_what_staff_and_students_open_holds_nothing_injected(graded):
    """Over the whole batch: no escape sequence or control character in the feedback, the summary or a gradebook, no
    formula cell, in every feedback only the grader's headings and score line, and the summary table printable."""
    for label, results in graded.results.items():
        feedback = (graded.folders[label] / "feedback.md").read_text()
        assert not unprintable(feedback), label
        scores = [text for text in strong(feedback) if text.startswith("Score")]
        assert len(headings(feedback)) == 1 + len(results.tests) and len(scores) == 1, (label, feedback)
    assert not unprintable((graded.out / "summary.md").read_text())
    for path in graded.out.glob("*.csv"):
        with open(path, newline="") as handle:
            rows = list(csv.reader(handle))
        assert not formulas(rows) and not [cell for row in rows for cell in row if unprintable(cell)], path.name
    console = Console(file=io.StringIO(), width=150)
    console.print(gradebook.summary_table([*graded.results.values(), *graded.bases.values()]))
    assert not unprintable(console.file.getvalue())


def test_the_terminal_shows_nothing_a_submission_sends_it(graded):
    """The progress bar names each submission as it finishes, through the terminal sink: a name's escape sequences
    (``escapes_in_the_name``) reach the instructor's terminal as nothing, and only the bar's own carriage returns are
    left for it to obey (tests/end_to_end/test_terminal.py grades a batch in a pseudo-terminal)."""
    assert "grading" in graded.terminal, "the progress bar wrote nothing: the check would see nothing"
    assert not unprintable(graded.terminal.replace("\r", "")), repr(graded.terminal[-2000:])


# Attacks on the batch itself (``HANDED_IN``, catalogue.py): each graded by `autograder grade` as an instructor runs it,
# in a results folder of its own (and resumed there with ``RESUMED``), in each mode.
BATCH_CASES = [case for case in CASES if case.handed_in]


@dataclass
class Batch:
    out: Path
    said: list[str]
    error: str = ""  # what the command raised, if it did


class _Said(logging.Handler):
    def __init__(self, said: list[str]):
        super().__init__()
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        self.said.append(record.getMessage())


@pytest.fixture(scope="module", params=list(MODES))
def batches(request, tmp_path_factory) -> dict[str, Batch]:
    mode = request.param
    base = tmp_path_factory.mktemp(f"batch-{mode}")
    values = {"REPO": str(REPO), "COPY": str(base), "PORT": "9"}
    done = {}
    with pytest.MonkeyPatch.context() as patch, private_tmp():
        patch.setenv("AUTOGRADER_NAMESPACES", MODES[mode])
        patch.setenv("AUTOGRADER_LOCK_FILES", "1")
        Isolation.detect.cache_clear()
        for case in (case for case in BATCH_CASES if mode in case.modes):
            batch = done[case.label] = Batch(out=base / "out" / case.label, said=[])
            handler, logger = _Said(batch.said), logging.getLogger("autograder")
            level = logger.level
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            options = ["--skip-tag", "runtime", "--skip-tag", "retraining", "--jobs", "2", "--quiet"]
            try:
                cli.main(["grade", str(case.hand_in(base / "in", values)), "--out", str(batch.out), *options])
                if case.resumed:
                    cli.main(["grade", str(case.hand_in(base / "in", values, resumed=True)), "--resume",
                              str(batch.out), *options])
            except Exception as exc:  # the old code's: the test says so, case by case
                batch.error = f"{type(exc).__name__}: {exc}"
            finally:
                logger.removeHandler(handler)
                logger.setLevel(level)
    Isolation.detect.cache_clear()
    return done


@pytest.mark.parametrize("case", BATCH_CASES, ids=[case.label for case in BATCH_CASES])
def test_an_attack_on_the_batch_leaves_it_its_files_and_each_student_a_row_of_their_own(batches, case: Case):
    if case.label not in batches:
        pytest.skip(f"{case.label} is graded with {' and '.join(case.modes)} only: {case.modes_why}")
    batch = batches[case.label]
    assert not batch.error, f"{case.label}: the command failed: {batch.error}"
    for name in ("gradebook.csv", "summary.md", "report.html", f"gradebook-{case.assignment}.csv"):
        assert (batch.out / name).is_file(), name
    for entry in batch.out.iterdir():  # every batch file has an extension, a submission's folder never
        assert entry.is_file() == ("." in entry.name) and entry.is_dir() == (entry / "results.json").is_file(), entry
    with open(batch.out / f"gradebook-{case.assignment}.csv", newline="", encoding="utf-8") as handle:
        rows = {row["submission"]: row.get("student_name", "") for row in csv.DictReader(handle)}
    assert rows == case.rows, f"{case.label}: whom each row names"
    for name in rows:
        results = Results.from_gradescope(json.loads((batch.out / name / "results.json").read_text()))
        expected = {"zero": results.score == 0, "full": results.score == results.max_score > 0,
                    "below": results.score < results.max_score, "any": True}[case.expect]
        assert expected, f"{case.label}/{name}: {results.score}/{results.max_score}, expected {case.expect}"
        seen = _seen(results)
        assert all(text in seen for text in case.present) and not any(text in seen for text in case.absent), seen
    for text in case.said:
        assert any(text in line for line in batch.said), f"{case.label} should say {text!r}: {batch.said}"
