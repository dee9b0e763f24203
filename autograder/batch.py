"""Grading many submissions: discovery, one runner process each (``--jobs`` at a time), the
gradebook CSV and the summary table.

A path given on the command line is a submission when it is a zip or holds some assignment's
files; otherwise it is a folder of submissions and is searched (to a few levels) for them. Links are
never followed inside a submission, detection included; among submissions only a link into the
repository's own solutions or skeletons is (the bundled examples use them).
Each submission is graded by ``python -m autograder.runner`` in its own process (its job on stdin), so a
submission that brings its grading process down cannot affect the others; when a runner dies or overruns its
hard limit, the batch completes its results file itself: every test the runner collected is listed, the
unfinished ones at zero, so the maximum does not shrink. Runners keep their temporary folders in one folder of
the batch's, removed at the end whatever happened; SIGINT or SIGTERM stops every runner (they stop their
workers), writes the gradebook of what finished and raises ``Interrupted``.

Gradings that run side by side get ``OMP_WAIT_POLICY=PASSIVE`` (runner and workers): by default OpenMP's
threads spin while they wait, and two gradings' spinning threads on the same cores slow each other down many
times over. A lone grading keeps the default, under which the lm reference trains faster (bench/throughput.py) and
with which the lm retraining budget was measured.
"""

from __future__ import annotations

import atexit
import contextlib
import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from autograder import assignment as assignments
from autograder import forking, permissions, scratch
from autograder.assignment import SECRET_ENV
from autograder.results import Results, TestResult, atomic_write, points
from autograder.sandbox import COLD_ENV, Isolation, become_subreaper, reap_children
from autograder.submission import unreadable_zip

ZYGOTES: dict[tuple, forking.Zygote] = {}  # the runner zygotes, by (side by side, isolation mode, Landlock ABI)

SEARCH_DEPTH = 3
HARD_LIMIT_MARGIN = 120.0
STOP_GRACE_SECONDS = 5.0  # after SIGTERM, a runner has this long to stop its workers before it is killed


class UnreadablePath(Exception):
    """A path given to ``grade`` does not exist or cannot be read: nothing is graded (the message says which)."""


class Interrupted(KeyboardInterrupt):
    """The batch was stopped by a signal; ``collected`` are the results of the submissions that finished."""

    def __init__(self, collected: list[Results]):
        super().__init__("stopped")
        self.collected = collected


class EngineError(Exception):
    """The engine cannot grade (``cluster.ClusterError``: Ray missing, the cluster unreachable); the message says what
    to do, and the command reports it in one line."""


@dataclass
class Job:
    """One submission to grade; ``skip_tags``: tags of tests not to run for it (see ``runner.grade_one``); ``secret``:
    the hidden seed to grade under instead of the term's, with ``hidden_only`` (``autograder validate`` draws the
    hidden tests' inputs under fresh secrets); ``public_only`` and ``oracle``: the job's own, whatever the batch's
    (validate grades its whole matrix in one batch). ``name`` may hold folders: its results go to ``out/name``."""

    name: str
    source: Path
    assignment: str | None
    problem: str = ""
    skip_tags: tuple[str, ...] = ()
    secret: str | None = None
    hidden_only: bool = False
    public_only: bool = False
    oracle: str | None = None


def detect(path: Path) -> str | None:
    """The assignment a submission (a folder or zip) is for, decided by the files it holds.

    Only an assignment's OWN files make it a candidate: a positions submission also holds the student's
    masking.py (carried), which must not make it look like a masking submission, and a masking submission
    is never taken for positions. Among candidates the one with the most of its required files present
    wins; a tie goes to the later assignment in course order, whose submission holds the earlier files too.
    """
    if path.is_file() and path.suffix.lower() == ".zip":
        try:
            with zipfile.ZipFile(path) as archive:
                present = {Path(n).name for n in archive.namelist()}
        except (zipfile.BadZipFile, OSError):
            return None
    elif path.is_dir():
        present = {p.name for p in _files(path, SEARCH_DEPTH)}
    else:
        return None
    best, best_rank = None, None
    for name in assignments.names():
        assignment = assignments.load(name)
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
            zipfile.ZipFile(path).close()
        except (zipfile.BadZipFile, OSError) as exc:
            return Job(name, path, None, unreadable_zip(path, exc))
    if path.is_dir() and not _files(path, SEARCH_DEPTH):
        return Job(name, path, None, f"{path.name} holds no files; a submission is a folder or zip holding one "
                                     "assignment's files (`autograder list` names them)")
    return Job(name, path, detect(path))


def _is_submission(path: Path, forced: str | None) -> bool:
    """A zip, or a folder holding (directly, not through a link) a required file of ``forced`` or of any
    assignment."""
    if path.is_file():
        return path.suffix.lower() == ".zip"
    names = [forced] if forced else assignments.names()
    return any(_regular(path / f) for name in names for f in assignments.load(name).files)


def _regular(path: Path) -> bool:
    """A regular file itself, not a link to one."""
    return not path.is_symlink() and path.is_file()


def _files(folder: Path, depth: int) -> list[Path]:
    """The regular files under ``folder`` down to ``depth`` levels, never through a link (a submission's own
    files decide what it is)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        level = len(Path(dirpath).relative_to(folder).parts)
        dirnames[:] = [d for d in dirnames if level + 1 < depth and not os.path.islink(os.path.join(dirpath, d))]
        found += [Path(dirpath) / f for f in filenames if _regular(Path(dirpath) / f)]
    return found


def _followable(path: Path) -> bool:
    """Whether discovery may enter ``path``: not a link, or a link into the repository's own solutions or
    skeletons (the bundled examples' reference and skeleton)."""
    if not path.is_symlink():
        return True
    resolved = path.resolve()
    return any(resolved.is_relative_to(assignments.REPO_ROOT / tree) for tree in ("solutions", "assignments"))


def _stem(path: Path) -> str:
    return path.stem if path.is_file() else path.name


def grade_all(jobs: list[Job], out: Path, *, workers: int = 1, public_only: bool = False, oracle: str = "auto",
              progress: bool = True, skip_tags: tuple[str, ...] | list[str] = (), engine: str = "local",
              address: str | None = None) -> list[Results]:
    """Grade every job into ``out/<name>/``; return the results in job order.

    ``skip_tags`` apply to every job, in addition to each job's own. A stop signal raises ``Interrupted`` once the
    runners have stopped and the gradebook of what finished is written. ``engine="ray"`` grades on the Ray cluster at
    ``address`` instead (``autograder.cluster``; ``workers`` is then the cluster's to decide).
    """
    if engine == "ray":
        from autograder import cluster

        return cluster.grade_all(jobs, out, address=address, public_only=public_only, oracle=oracle,
                                 progress=progress, skip_tags=skip_tags)
    become_subreaper()
    out.mkdir(parents=True, exist_ok=True)
    isolation = Isolation.detect()
    if isolation.privileged:
        permissions.protect_checkout()
        for path in (out, *(job.source for job in jobs)):
            permissions.protect(path)
    bar = progress_bar(len(jobs), progress)
    runners = Runners(isolation, side_by_side=workers > 1 and len(jobs) > 1, huge_pages=len(jobs) > 1)
    finished: dict[int, Results] = {}

    def run(index: int, job: Job) -> None:
        if runners.stopping:
            return
        results = grade_job(job, out / job.name, public_only=public_only, oracle=oracle, skip_tags=skip_tags,
                            runners=runners)
        if results is None:
            return
        finished[index] = results
        advance(bar, results)

    with runners.stop_on_signals(), ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for future in [pool.submit(run, index, job) for index, job in enumerate(jobs)]:
            future.result()
    bar.close()
    collected = [finished[index] for index in sorted(finished)]
    write_batch(collected, out)
    if runners.stopping:
        raise Interrupted(collected)
    return collected


def progress_bar(total: int, enabled: bool = True) -> tqdm:
    """The batch's progress bar, whichever engine grades (``advance`` it with each submission's results)."""
    return tqdm(total=total, desc="grading", unit="submission", disable=not enabled)


def advance(bar: tqdm, results: Results) -> None:
    bar.set_postfix_str(f"{results.submission}: {points(results.score)}/{points(results.max_score)}")
    bar.update()


def write_batch(collected: list[Results], out: Path) -> None:
    """The batch's own files from the results of the submissions that finished: the gradebook, the written answers
    and the summary."""
    write_gradebook([results for results in collected if results.tests], out / "gradebook.csv")
    write_manual_answers(collected, out / "manual_answers.csv")
    atomic_write(out / "summary.md", summary_markdown(collected))


class Runners:
    """The runner processes in flight, started in a scratch folder of the batch's (their TMPDIR), so that a stop
    signal reaches every one and nothing they leave outlives the batch.

    Runners are forked by a warm zygote (``autograder.runner_zygote``), one per kind of grading, started once and kept
    for the life of this process (``validate`` grades many batches); ``AUTOGRADER_COLD=1`` starts each runner as a
    new interpreter instead. ``huge_pages``: the zygote, if started here, moves its memory into 2 MiB pages before it
    serves (``forking.collapse_memory``): for a batch of many, whose forks that makes cheaper; a lone submission's
    would wait for the move (a zygote started for one is then reused as it is)."""

    def __init__(self, isolation: Isolation, side_by_side: bool = False, huge_pages: bool = False):
        self.isolation = isolation
        self.side_by_side = side_by_side
        self.huge_pages = huge_pages
        self.stopping = False
        self.live: set = set()
        self.abnormal = False  # a runner died or was killed: its leftovers need a sweep
        self._lock = threading.Lock()
        self.scratch: Path | None = None
        self.shared: Path | None = None  # the runners' known mistakes' values (``autograder.oracle``), as root only

    def environment(self) -> dict:
        """The runners' environment: the term's secret is not in it (it travels in the job, on stdin)."""
        env = {name: value for name, value in os.environ.items() if name != SECRET_ENV}
        env["TMPDIR"] = str(self.scratch)
        env.update(self.isolation.environment())  # the runners need not probe again
        if self.side_by_side:
            env["OMP_WAIT_POLICY"] = "PASSIVE"
        return env

    def zygote(self) -> forking.Zygote | None:
        """This kind of grading's runner zygote, started on first use (from the main thread: its parent-death signal
        follows the thread that starts it); None to start runners cold."""
        if os.environ.get(COLD_ENV) == "1":
            return None
        key = (self.side_by_side, self.isolation.mode, self.isolation.landlock)
        zygote = ZYGOTES.get(key)
        if zygote is None or zygote.process.poll() is not None:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            process = subprocess.Popen(
                [sys.executable, "-m", "autograder.runner_zygote", "--channel", str(theirs.fileno()),
                 *(["--huge-pages"] if self.huge_pages else [])],
                pass_fds=(theirs.fileno(),), env=self.environment(), cwd="/", stdin=subprocess.DEVNULL,
                start_new_session=True)
            theirs.close()
            if not ZYGOTES:
                atexit.register(close_zygotes)
            zygote = ZYGOTES[key] = forking.Zygote(process.pid, ours, process)
        return zygote

    def start(self, job: dict, log) -> subprocess.Popen | forking.Forked:
        """Start a runner for ``job`` (sent on its stdin), its output into the file ``log``."""
        shared = {"shared": str(self.shared)} if self.shared else {}
        payload = json.dumps({**job, "tmp": str(self.scratch), **shared, "started": time.time()}).encode()
        zygote = self.zygote()
        with self._lock:
            process = None
            if zygote is not None:
                read, write = os.pipe()
                try:
                    process = zygote.spawn(self.environment(), [read, log.fileno()], None)
                    os.write(write, payload)
                except forking.ForkRefused:
                    process = None
                finally:
                    os.close(read)
                    os.close(write)
            if process is None:
                process = subprocess.Popen([sys.executable, "-m", "autograder.runner"], stdin=subprocess.PIPE,
                                           stdout=log, stderr=subprocess.STDOUT, env=self.environment(),
                                           start_new_session=True)
                process.stdin.write(payload)
                process.stdin.close()
            self.live.add(process)
        return process

    def finish(self, process) -> None:
        with self._lock:
            self.live.discard(process)
            self.abnormal = self.abnormal or process.returncode != 0
            live = {runner.pid for runner in self.live}
        forking.reap_ended(set(ZYGOTES.values()), keep=live)  # what earlier runners left

    def stop(self) -> None:
        """SIGTERM every runner (each stops its workers and writes what it has), then SIGKILL the stragglers."""
        self.stopping = True
        with self._lock:
            live = list(self.live)
        for process in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in live:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    @contextlib.contextmanager
    def stop_on_signals(self, signals: bool = True):
        """Within the block: a scratch folder for the runners, and SIGINT/SIGTERM stop them (main thread only, and
        not with ``signals=False``: a Ray worker's signals are Ray's); afterwards the scratch folder is removed and, if
        a runner ended abnormally, whatever it left is swept."""
        become_subreaper()  # forked runners are re-parented here
        before = forking.child_pids()  # the host's, never reaped here
        self.scratch = scratch.make("batch")
        if self.isolation.privileged:
            os.chmod(self.scratch, 0o711)  # the workers' uids pass through to their own folders
            self.shared = self.scratch / "mistakes"  # no student process can write there (not as its own user)
            self.shared.mkdir(mode=0o700)
        handlers = {}
        if signals and threading.current_thread() is threading.main_thread():
            for number in (signal.SIGINT, signal.SIGTERM):
                handlers[number] = signal.signal(number, lambda *_: threading.Thread(target=self.stop).start())
            self.zygote()
        try:
            yield self
        finally:
            for number, handler in handlers.items():
                signal.signal(number, handler)
            if (self.abnormal or self.stopping) and self.isolation.privileged:
                permissions.sweep_free()  # the uids of workers whose runner did not give them back
            reap_children(before | {zygote.pid for zygote in ZYGOTES.values()}, STOP_GRACE_SECONDS)
            scratch.remove(self.scratch)


def close_zygotes() -> None:
    """Stop the runner zygotes and reap what they leave (at exit, so that none outlives the batch's process)."""
    for zygote in ZYGOTES.values():
        with contextlib.suppress(OSError):
            zygote.process.kill()
        zygote.process.wait()
        zygote.close()
    ZYGOTES.clear()
    reap_children(set(), STOP_GRACE_SECONDS)


def grade_job(job: Job, out_dir: Path, *, public_only: bool = False, oracle: str = "auto",
              skip_tags: tuple[str, ...] | list[str] = (), runners: Runners | None = None,
              secret: str | None = None) -> Results | None:
    """Grade one job in its own runner process into ``out_dir``; a results file is written whatever happens, unless
    the batch was stopped before the runner listed its tests (then nothing, and None).

    Tests tagged with one of ``skip_tags`` or the job's own are not run; ``runners`` are the batch's runners (a lone
    job gets its own); ``secret`` the term's hidden seed (default: ``AUTOGRADER_SECRET`` where it is set; a job's own
    ``secret`` wins over both).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    results_file = out_dir / "results.json"
    results_file.unlink(missing_ok=True)
    if job.problem or job.assignment is None:
        return not_graded(job, out_dir)
    if runners is None:
        runners = Runners(Isolation.detect())
        with runners.stop_on_signals():
            return grade_job(job, out_dir, public_only=public_only, oracle=oracle, skip_tags=skip_tags,
                             runners=runners, secret=secret)
    assignment = assignments.load(job.assignment)
    tags = list(dict.fromkeys((*skip_tags, *job.skip_tags)))
    spec = {"assignment": job.assignment, "submission": os.path.abspath(job.source), "out": os.path.abspath(out_dir),
            "name": job.name, "oracle": job.oracle or oracle, "public_only": public_only or job.public_only,
            "hidden_only": job.hidden_only, "skip_tags": tags}
    secret = next((s for s in (job.secret, secret, os.environ.get(SECRET_ENV)) if s is not None), None)
    if secret is not None:
        spec["secret"] = secret
    limit = assignment.submission_timeout + HARD_LIMIT_MARGIN
    problem = ""
    with open(out_dir / "runner.log", "wb") as log:
        process = runners.start(spec, log)
    try:
        process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        problem = f"grading did not finish within {limit:g} s"
    runners.finish(process)
    if not problem and process.returncode != 0:
        problem = ("the grader was stopped" if runners.stopping
                   else f"the grading process failed (exit status {process.returncode})")
    results = read_results(results_file)
    if results is None and runners.stopping:  # stopped before it listed its tests: not graded at all
        shutil.rmtree(out_dir, ignore_errors=True)
        return None
    if results is None or problem:
        results = completed(results, job, problem or "no results were written")
        results.write(out_dir)
    return results


def not_graded(job: Job, out_dir: Path, problem: str = "") -> Results:
    """The results of a job that cannot be graded at all (``problem``, its own, or an unknown assignment), written
    into ``out_dir``."""
    known = ", ".join(f"{n} ({', '.join(assignments.load(n).files)})" for n in assignments.names())
    problem = problem or job.problem or (f"could not tell which assignment this is; a submission holds the files of "
                                         f"one of: {known}. Pass --assignment NAME to grade it anyway")
    results = Results(assignment=job.assignment or "unknown", submission=job.name,
                      output=f"Your submission could not be graded: {problem}.")
    results.extra_data["status"] = f"not graded: {problem}"
    results.write(out_dir)
    return results


def completed(results: Results | None, job: Job, problem: str) -> Results:
    """The results of a runner that did not finish: what it wrote (every collected test, the unfinished at zero)
    and a note that says so."""
    results = results or Results(assignment=job.assignment, submission=job.name)
    note = (f"The grader could not finish this submission ({problem}); the scores below are those of the tests "
            "that finished, and the others count zero. The course staff can see runner.log.")
    results.output = f"{results.output}\n\n{note}".strip()
    results.extra_data["status"] = f"incomplete: {problem}"
    for test in results.tests:
        if test.extra_data.get("pending"):
            test.output = f"Not run: {problem}."
    if not results.tests:
        results.tests.append(TestResult(name="Grading", number="0", score=0, max_score=0, status="failed",
                                        output=note))
    return results


def read_results(path: Path) -> Results | None:
    """A results.json file, or None when it is missing or unreadable."""
    try:
        return Results.from_gradescope(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def ungraded(collected: list[Results]) -> list[Results]:
    """The submissions that got no grade: not recognised or refused as handed in, or the grader failed."""
    return [results for results in collected
            if str(results.extra_data.get("status", "")).startswith(("not graded", "grader failed"))]


def write_gradebook(collected: list[Results], path: Path, students: dict | None = None) -> None:
    """One row per submission: totals, then one column per test (in first-seen order).

    ``students``: Gradescope's submitters by submission name (``gradescope.students``); when any submission has
    them, three columns give their names, e-mail addresses and ids (a group's joined with "; ")."""
    students = {name: found for name, found in (students or {}).items() if found}
    named = ["student_name", "student_email", "student_id"] if students else []
    columns: list[str] = []
    for results in collected:
        for test in results.tests:
            label = f"{results.assignment}:{test.number} {test.name}"
            if label not in columns:
                columns.append(label)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".csv.tmp")
    with open(temp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", *named, "assignment", "score", "max_score", "percent", "execution_time",
                         *columns])
        for results in collected:
            scores = {f"{results.assignment}:{t.number} {t.name}": t.score for t in results.tests}
            percent = 100 * results.score / results.max_score if results.max_score else 0.0
            who = students.get(results.submission, ())
            writer.writerow([results.submission, *("; ".join(getattr(s, field) for s in who) for field in
                                                   ("name", "email", "id")[:len(named)]),
                             results.assignment, results.score, results.max_score,
                             f"{percent:.1f}", f"{results.execution_time:.1f}", *(scores.get(c, "") for c in columns)])
    os.replace(temp, path)


def summary_table(collected: list[Results]) -> Table:
    table = Table(title="Grading summary")
    for column, justify in [("submission", "left"), ("assignment", "left"), ("score", "right"),
                            ("passed", "right"), ("time (s)", "right"), ("status", "left")]:
        table.add_column(column, justify=justify, no_wrap=True, overflow="ellipsis",
                         max_width=60 if column == "status" else None)
    for results in collected:
        score = f"{points(results.score)} / {points(results.max_score)}"
        table.add_row(results.submission, results.assignment, score, passed(results),
                      f"{results.execution_time:.1f}", _status(results))
    return table


def passed(results: Results) -> str:
    """"passed/tests" among the tests that carry points: a 0-point test (a written answer for human graders, a rule
    report, a check run elsewhere) informs and is not counted, so a submission that did not load reads 0/N."""
    scored = [test for test in results.tests if test.max_score > 0]
    return f"{sum(test.status == 'passed' for test in scored)}/{len(scored)}"


def write_manual_answers(collected: list[Results], path: Path) -> None:
    """Written answers for human graders: one row per submission and question (nothing when none)."""
    rows = [(r.submission, r.assignment, t.extra_data["question"], t.extra_data["points"], t.extra_data["answer"])
            for r in collected for t in r.tests if t.extra_data.get("manual")]
    if not rows:
        return
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "assignment", "question", "points", "answer"])
        writer.writerows(rows)


def _status(results: Results, limit: int = 80) -> str:
    status = str(results.extra_data.get("status", ""))
    return status if len(status) <= limit else status[: limit - 3] + "..."


def summary_markdown(collected: list[Results]) -> str:
    lines = ["| submission | assignment | score | passed | time (s) | status |", "|---|---|---|---|---|---|"]
    for results in collected:
        score = f"{points(results.score)} / {points(results.max_score)}"
        lines.append(f"| {results.submission} | {results.assignment} | {score} | {passed(results)} "
                     f"| {results.execution_time:.1f} | {_status(results)} |")
    return "\n".join(lines) + "\n"


def print_summary(collected: list[Results]) -> None:
    """Print the table; logs and pipes get a wide fixed width instead of rich's default 80 columns."""
    Console(width=None if sys.stdout.isatty() else 150).print(summary_table(collected))
