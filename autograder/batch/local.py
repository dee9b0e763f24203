"""The local engine (``autograder.batch.engine``): a pool of ``workers`` threads on this machine, each starting one
runner process per submission (``autograder.batch.runners``), so that a submission that brings its grading process
down cannot affect the others."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.batch.discovery import Job
from autograder.batch.engine import Interrupted, advance, progress_bar
from autograder.batch.jobs import grade_job
from autograder.batch.runners import Runners
from autograder.course import REPO_ROOT
from autograder.grading_options import GradingOptions
from autograder.results import Results
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.reaping import become_subreaper


def grade_all(jobs: list[Job], out: Path, options: GradingOptions = GradingOptions(), *, workers: int = 1,
              progress: bool = True, address: str | None = None) -> list[Results]:
    """Grade every job into ``out/<name>/`` with ``options`` (under each job's own); return the results in job order.

    A stop signal raises ``Interrupted`` once the runners have stopped, with what finished. ``address`` is the Ray
    engine's, unused here.
    """
    become_subreaper()
    out.mkdir(parents=True, exist_ok=True)
    isolation = Isolation.detect()
    permissions.keep_out(isolation, [out, *(job.source for job in jobs)], checkout=REPO_ROOT)
    if isolation.mode == "permissions":  # one at a time (``permissions.graded_alone``): no thread waits for its turn
        workers = 1
    bar = progress_bar(len(jobs), progress)
    runners = Runners(isolation, side_by_side=workers > 1 and len(jobs) > 1, huge_pages=len(jobs) > 1)
    finished: dict[int, Results] = {}

    def run(index: int, job: Job) -> None:
        if runners.stopping:
            return
        results = grade_job(job, out / job.name, options, runners=runners)
        if results is None:
            return
        finished[index] = results
        advance(bar, results)

    with runners.stop_on_signals(), ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for future in [pool.submit(run, index, job) for index, job in enumerate(jobs)]:
            future.result()
    bar.close()
    collected = [finished[index] for index in sorted(finished)]
    if runners.stopping:
        raise Interrupted(collected)
    return collected
