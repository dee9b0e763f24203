"""The local engine (``autograder.batch.engine``): a pool of ``workers`` threads on this machine, each starting one
runner process per submission (``autograder.batch.runners``), so that a submission that brings its grading process
down cannot affect the others."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.batch.discovery import Job
from autograder.batch.engine import Interrupted, advance, progress_bar
from autograder.batch.gradebook import write_batch
from autograder.batch.jobs import grade_job
from autograder.batch.runners import Runners
from autograder.course import REPO_ROOT
from autograder.results import Results
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.reaping import become_subreaper


def grade_all(jobs: list[Job], out: Path, *, workers: int = 1, public_only: bool = False, oracle: str = "auto",
              progress: bool = True, skip_tags: tuple[str, ...] | list[str] = (),
              address: str | None = None) -> list[Results]:
    """Grade every job into ``out/<name>/``; return the results in job order.

    ``skip_tags`` apply to every job, in addition to each job's own. A stop signal raises ``Interrupted`` once the
    runners have stopped and the gradebook of what finished is written. ``address`` is the Ray engine's, unused here.
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
