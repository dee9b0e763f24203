"""Grading a batch, whichever engine grades it: ``grade_all`` picks an ``Engine`` by name (``ENGINES``); each grades
every job into ``out/<name>/`` the same way (a runner per submission, ``autograder.batch.jobs``) and returns the
results; it writes nothing else (the folder's own files are ``autograder.batch.folder``'s). ``local`` is a pool of
runner processes on this machine (``autograder.batch.local``); ``ray`` schedules the same per-submission task on a Ray
cluster (``autograder.batch.ray``). An engine is a module, imported when chosen: Ray's is loaded only for
``--engine ray``."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Protocol

from tqdm import tqdm

from autograder import sinks
from autograder.batch.discovery import Job
from autograder.batch.gradebook import counts
from autograder.grading_options import GradingOptions
from autograder.results import Results, points

ENGINES = {"local": "autograder.batch.local", "ray": "autograder.batch.ray"}


class Engine(Protocol):
    """What an engine module provides: grade every job into ``out/<name>/`` with ``options`` (passed on untouched:
    each job's own apply over them, ``autograder.batch.jobs.grade_job``), return the results in job order, and raise
    ``Interrupted`` on a stop signal once what finished is written. ``workers``: how many at a time (the local pool's;
    a cluster decides its own); ``address``: the cluster's (Ray only)."""

    def grade_all(self, jobs: list[Job], out: Path, options: GradingOptions = GradingOptions(), *, workers: int = 1,
                  progress: bool = True, address: str | None = None) -> list[Results]: ...


class Interrupted(KeyboardInterrupt):
    """The batch was stopped by a signal; ``collected`` are the results written before it stopped, each with its
    status (a grading the signal stopped is ``stopped``, and has no score); ``detail`` says so in the words of the
    summary (the command prints it, and may say more)."""

    def __init__(self, collected: list[Results]):
        super().__init__("stopped")
        self.collected = collected
        self.detail = f"results written for {counts(collected)}"


class EngineError(Exception):
    """The engine cannot grade (``autograder.batch.ray.ClusterError``: Ray missing, the cluster unreachable); the
    message says what to do, and the command reports it in one line."""


def grade_all(jobs: list[Job], out: Path, options: GradingOptions = GradingOptions(), *, engine: str = "local",
              **where) -> list[Results]:
    """Grade every job into ``out/<name>/`` with ``options`` (under each job's own) and the engine named ``engine``
    (``Engine.grade_all`` lists ``where``: workers, progress, address); return the results in job order."""
    if engine not in ENGINES:
        raise EngineError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    chosen: Engine = importlib.import_module(ENGINES[engine])  # type: ignore[assignment]
    return chosen.grade_all(jobs, out, options, **where)


def progress_bar(total: int, enabled: bool = True) -> tqdm:
    """The batch's progress bar, whichever engine grades (``advance`` it with each submission's results)."""
    return tqdm(total=total, desc="grading", unit="submission", disable=not enabled)


def advance(bar: tqdm, results: Results) -> None:
    """Show ``results`` on the bar: the submission's name (the student's: it reaches the terminal through its sink,
    on one line) and its score."""
    bar.set_postfix_str(f"{sinks.line(results.submission)}: {points(results.score)}/{points(results.max_score)}")
    bar.update()


