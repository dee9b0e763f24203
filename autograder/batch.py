"""Grading many submissions: discovery, one runner process each (``--jobs`` at a time), the
gradebook CSV and the summary table.

A path given on the command line is a submission when it is a zip or holds some assignment's
files; otherwise it is a folder of submissions and is searched (to a few levels) for them.
Each submission is graded by ``python -m autograder.runner`` in its own process, so a
submission that brings its grading process down cannot affect the others; when a runner dies
or overruns its hard limit, the batch writes the results file itself, keeping the tests the
runner had finished.

Gradings that run side by side get ``OMP_WAIT_POLICY=PASSIVE`` (runner and workers): by default OpenMP's
threads spin while they wait, and two gradings' spinning threads on 2 cores made an lm grading 3x slower
(119 s against 37 s). A lone grading keeps the default, under which the lm reference trained 17 % faster
(bench/throughput.py) and with which the lm retraining budget was measured.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table
from tqdm import tqdm

from autograder import assignment as assignments
from autograder.results import Results, TestResult, atomic_write, points
from autograder.sandbox import become_subreaper

SEARCH_DEPTH = 3
HARD_LIMIT_MARGIN = 120.0


@dataclass
class Job:
    """One submission to grade; ``skip_tags``: tags of tests not to run for it (see ``runner.grade_one``)."""

    name: str
    source: Path
    assignment: str | None
    problem: str = ""
    skip_tags: tuple[str, ...] = ()


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
        present = {p.name for depth in range(SEARCH_DEPTH) for p in path.glob("/".join(["*"] * (depth + 1)))}
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
    """Expand command-line paths into jobs with unique names."""
    jobs: list[Job] = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            jobs.append(Job(path.name or str(path), path, forced, f"{path} does not exist"))
            continue
        found = _search(path, forced, depth=0)
        if not found:  # an explicit path is always graded, even when it holds nothing recognisable
            found = [Job(_stem(path), path, forced or detect(path))]
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
        return [Job(prefix + _stem(path), path, forced or detect(path))]
    if not path.is_dir() or depth >= SEARCH_DEPTH:
        return []
    jobs = []
    for child in sorted(path.iterdir()):
        if not child.name.startswith(".") and child.name not in ("__pycache__", "__MACOSX"):
            jobs += _search(child, forced, depth + 1, f"{prefix}{path.name}-" if depth > 0 else prefix)
    return jobs


def _is_submission(path: Path, forced: str | None) -> bool:
    """A zip, or a folder holding (directly) a required file of ``forced`` or of any assignment."""
    if path.is_file():
        return path.suffix.lower() == ".zip"
    names = [forced] if forced else assignments.names()
    return any((path / f).is_file() for name in names for f in assignments.load(name).files)


def _stem(path: Path) -> str:
    return path.stem if path.is_file() else path.name


def grade_all(jobs: list[Job], out: Path, *, workers: int = 1, public_only: bool = False, oracle: str = "auto",
              progress: bool = True, skip_tags: tuple[str, ...] | list[str] = ()) -> list[Results]:
    """Grade every job into ``out/<name>/``; return the results in job order.

    ``skip_tags`` apply to every job, in addition to each job's own.
    """
    become_subreaper()
    out.mkdir(parents=True, exist_ok=True)
    hide = sorted({str(j.source.resolve().parent) for j in jobs} | {str(out.resolve())})
    bar = tqdm(total=len(jobs), desc="grading", unit="submission", disable=not progress)

    def run(job: Job) -> Results:
        results = grade_job(job, out / job.name, hide, public_only=public_only, oracle=oracle, skip_tags=skip_tags,
                            side_by_side=workers > 1 and len(jobs) > 1)
        bar.set_postfix_str(f"{job.name}: {points(results.score)}/{points(results.max_score)}")
        bar.update()
        return results

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        collected = list(pool.map(run, jobs))
    bar.close()
    write_gradebook(collected, out / "gradebook.csv")
    write_manual_answers(collected, out / "manual_answers.csv")
    atomic_write(out / "summary.md", summary_markdown(collected))
    return collected


def grade_job(job: Job, out_dir: Path, hide: list[str], *, public_only: bool = False, oracle: str = "auto",
              skip_tags: tuple[str, ...] | list[str] = (), runner_args: tuple[str, ...] | list[str] = (),
              side_by_side: bool = False) -> Results:
    """Grade one job in its own runner process into ``out_dir``; a results file is written whatever happens.

    ``hide`` are paths the student code must not see; tests tagged with one of ``skip_tags`` or the job's own
    are not run; ``runner_args`` are passed on to ``autograder.runner``; ``side_by_side`` says that other
    gradings share the cores (see the module docstring).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    results_file = out_dir / "results.json"
    results_file.unlink(missing_ok=True)
    if job.problem or job.assignment is None:
        known = ", ".join(f"{n} ({', '.join(assignments.load(n).files)})" for n in assignments.names())
        problem = job.problem or (f"could not tell which assignment this is; a submission holds the files of one "
                                  f"of: {known}. Pass --assignment NAME to grade it anyway")
        results = Results(assignment=job.assignment or "unknown", submission=job.name,
                          output=f"Your submission could not be graded: {problem}.")
        results.extra_data["status"] = f"not graded: {problem}"
        results.write(out_dir)
        return results
    assignment = assignments.load(job.assignment)
    command = [sys.executable, "-m", "autograder.runner", "--assignment", job.assignment, "--submission",
               str(job.source), "--out", str(out_dir), "--name", job.name, "--oracle", oracle,
               *(["--public-only"] if public_only else []), *(a for h in hide for a in ("--hide", h)),
               *(a for tag in dict.fromkeys((*skip_tags, *job.skip_tags)) for a in ("--skip-tag", tag)), *runner_args]
    problem = ""
    with open(out_dir / "runner.log", "wb") as log:
        try:
            process = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False,
                                     env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"} if side_by_side else None,
                                     timeout=assignment.submission_timeout + HARD_LIMIT_MARGIN)
            if process.returncode != 0:
                problem = f"the grading process failed (exit status {process.returncode})"
        except subprocess.TimeoutExpired:
            problem = f"grading did not finish within {assignment.submission_timeout + HARD_LIMIT_MARGIN:g} s"
    results = _read(results_file)
    if results is None or problem:
        results = results or Results(assignment=job.assignment, submission=job.name)
        note = (f"The grader could not finish this submission ({problem or 'no results were written'}); the "
                "scores below are those of the tests that finished. The course staff can see runner.log.")
        results.output = f"{results.output}\n\n{note}".strip()
        results.extra_data["status"] = f"incomplete: {problem or 'no results written'}"
        if not results.tests:
            results.tests.append(TestResult(name="Grading", number="0", score=0, max_score=0, status="failed",
                                            output=note))
        results.write(out_dir)
    return results


def _read(path: Path) -> Results | None:
    try:
        return Results.from_gradescope(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_gradebook(collected: list[Results], path: Path) -> None:
    """One row per submission: totals, then one column per test (in first-seen order)."""
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
        writer.writerow(["submission", "assignment", "score", "max_score", "percent", "execution_time", *columns])
        for results in collected:
            scores = {f"{results.assignment}:{t.number} {t.name}": t.score for t in results.tests}
            percent = 100 * results.score / results.max_score if results.max_score else 0.0
            writer.writerow([results.submission, results.assignment, results.score, results.max_score,
                             f"{percent:.1f}", f"{results.execution_time:.1f}", *(scores.get(c, "") for c in columns)])
    os.replace(temp, path)


def summary_table(collected: list[Results]) -> Table:
    table = Table(title="Grading summary")
    for column, justify in [("submission", "left"), ("assignment", "left"), ("score", "right"),
                            ("passed", "right"), ("time (s)", "right"), ("status", "left")]:
        table.add_column(column, justify=justify, no_wrap=True, overflow="ellipsis",
                         max_width=60 if column == "status" else None)
    for results in collected:
        passed = sum(t.status == "passed" for t in results.tests)
        score = f"{points(results.score)} / {points(results.max_score)}"
        table.add_row(results.submission, results.assignment, score, f"{passed}/{len(results.tests)}",
                      f"{results.execution_time:.1f}", _status(results))
    return table


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
        passed = sum(t.status == "passed" for t in results.tests)
        score = f"{points(results.score)} / {points(results.max_score)}"
        lines.append(f"| {results.submission} | {results.assignment} | {score} | {passed}/{len(results.tests)} "
                     f"| {results.execution_time:.1f} | {_status(results)} |")
    return "\n".join(lines) + "\n"


def print_summary(collected: list[Results]) -> None:
    """Print the table; logs and pipes get a wide fixed width instead of rich's default 80 columns."""
    Console(width=None if sys.stdout.isatty() else 150).print(summary_table(collected))
