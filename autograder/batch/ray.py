"""Grading a batch on a Ray cluster (``autograder grade --engine ray``): Ray schedules, retries and cancels; what
grades a submission is unchanged.

Each submission is one Ray task (``grade_task``) that runs on some node exactly what the local engine runs for it
(``grade_job``: a runner forked by a warm zygote, kept for the life of the Ray worker process, whose workers
apply the same sandbox). No shared file system is assumed: the submission travels to the task as bytes
(``submission.pack``) and every file the grading wrote comes back as data; the driver writes each submission's
folder (its results through ``Results.write``) and returns the results as the local engine does, with the same
progress bar (the batch's gradebooks are ``autograder.batch.folder``'s).

Every grading's OpenMP threads wait as on the local engine (``autograder.batch.runners.OPENMP``): on a node
shared with other gradings and Ray's own processes, OpenMP threads that spin while they wait made an lm grading
several times slower, even alone on its node.

Resources are declared per task: the assignment's thread count as CPUs, its worker's memory limit as memory (so that
a node never runs more gradings than its memory holds), and one GPU for an assignment whose GPU tests (``gpu_tags`` in
``assignment.toml``) are not skipped, when the cluster has a GPU. A task whose worker process or
node dies is run again by Ray (``RETRIES`` times); one that still fails gets a results file from the driver that says
so, like a runner that died locally. A submission that brings its grading down kills its runner, never the Ray
worker, so it is not retried; the driver keeps one result per submission, so nothing is graded twice into the
gradebook. A task that no live node can run (its nodes were lost, or none was ever big enough) would wait for ever
in Ray's queue: after ``STRANDED_SECONDS`` without such a node, the driver cancels it and the submission gets a "not
graded" result that says what it needs. SIGINT or SIGTERM cancels the tasks not finished (their processes are
killed; their runners and workers die with them) and raises ``Interrupted`` with what finished.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import logging
import os
import signal
import threading
import time
from pathlib import Path

from autograder import course, scratch
from autograder.batch.discovery import Job
from autograder.batch.engine import EngineError, Interrupted, advance, progress_bar
from autograder.batch.jobs import completed, grade_job, not_graded, with_term_secret
from autograder.batch.runners import Runners
from autograder.course import REPO_ROOT
from autograder.grading_options import GradingOptions
from autograder.results import Results, parse_results
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation
from autograder.submission import SubmissionError, pack, unpack

RETRIES = 2  # runs of a task after its worker process or node died, before the driver gives the submission up
WAIT_SECONDS = 0.5  # how often the driver looks at a stop request while it waits for tasks
NODES_SECONDS = 5.0  # how often the driver looks at which nodes are alive, for tasks that none of them can run
STRANDED_SECONDS = 60.0  # how long a task that no live node can run waits for one to join, before it is given up


class ClusterError(EngineError):
    """Ray is missing or the cluster cannot be reached; the message says what to do."""


def connect(address: str | None):
    """The ``ray`` module, connected once per process: to the cluster at ``address`` (``auto``: the one started on
    this machine with ``ray start``; ``ray://HOST:PORT``: Ray Client), or with no address to a new local cluster on
    this machine's cores, stopped when this process ends and reachable on the loopback address only."""
    # Probe the isolation before a local cluster's processes are this process's children: the probe's sandbox, once
    # stopped, reaps every child of its process but live workers.
    Isolation.detect()
    # A task its node's memory monitor kills is retried without limit by default: bound it as other losses are.
    os.environ.setdefault("RAY_task_oom_retries", str(RETRIES))
    if _loopback(address):  # Ray's switch for a single-machine cluster, read when ray is imported: without it a
        # cluster listens on, and a driver looks for its node at, this machine's network address, not 127.0.0.1
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ClusterError('the Ray engine needs Ray: pip install -e ".[cluster]" (or grade with --engine local)') \
            from None
    if not ray.is_initialized():
        options = {"address": address} if address else {"address": "local", "include_dashboard": False}
        try:
            ray.init(**options, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise ClusterError(f"cannot reach a Ray cluster at {address}: {exc}; start one with `ray start --head` "
                               "(see docs/cluster.md) or leave out --address to grade on a local one") from None
    return ray


def _loopback(address: str | None) -> bool:
    """Whether ``address`` is a cluster on this machine's loopback interface (none: the local cluster started here)."""
    host = (address or "127.0.0.1").removeprefix("ray://").rsplit(":", 1)[0]
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def grade_task(job: Job, packed: tuple[str, bytes], options: GradingOptions, many: bool) -> dict[str, bytes]:
    """One submission, in a Ray worker: ``job`` with its own options (a job's own secret and test selection, as
    ``autograder validate`` sets them, must reach the grading) but a source on the driver, ``packed`` its files
    (``submission.pack``), ``options`` the batch's (the driver's secret in them) and ``many`` whether the batch has
    several submissions (they share this worker's runner zygote); returns every file the grading wrote, by path
    relative to its results folder."""
    isolation = Isolation.detect()
    permissions.keep_out(isolation, checkout=REPO_ROOT)
    with scratch.folder("task") as temp:  # mode 0700: the grader's alone
        out_dir = temp / "out"
        job = dataclasses.replace(job, source=unpack(*packed, temp / "source"))
        runners = Runners(isolation, side_by_side=many, huge_pages=many)
        with runners.stop_on_signals(signals=False):
            grade_job(job, out_dir, options, runners=runners)
        return {str(path.relative_to(out_dir)): path.read_bytes() for path in sorted(out_dir.rglob("*"))
                if path.is_file()}


def grade_all(jobs: list[Job], out: Path, options: GradingOptions = GradingOptions(), *, workers: int = 1,
              progress: bool = True, address: str | None = None) -> list[Results]:
    """The engine's ``grade_all`` (``autograder.batch.engine.Engine``) on the Ray cluster at ``address``: grade every
    job into ``out/<name>/``; return the results in job order. ``workers`` is the cluster's to decide, not ours."""
    ray = connect(address)
    out.mkdir(parents=True, exist_ok=True)
    permissions.keep_out(Isolation.detect(), [out])
    gpus = ray.cluster_resources().get("GPU", 0) > 0
    remote = ray.remote(grade_task)
    options = with_term_secret(options)  # the driver's: a worker does not have its environment
    bar = progress_bar(len(jobs), progress)
    finished: dict[int, Results] = {}
    pending: dict = {}  # Ray's reference to a task's result -> the index of its job
    needs: dict = {}  # Ray's reference to a task's result -> the resources it asked for
    for index, job in enumerate(jobs):
        if job.problem or job.assignment is None:
            finished[index] = not_graded(job, out / job.name)
            advance(bar, finished[index])
            continue
        try:
            packed = pack(job.source)
        except (SubmissionError, OSError) as exc:
            finished[index] = not_graded(job, out / job.name, str(exc))
            advance(bar, finished[index])
            continue
        assignment = course.load(job.assignment)
        tags = set(job.options.over(options).skip_tags)
        threads = assignment.limits.threads
        resources = {"num_cpus": threads, "memory": assignment.limits.memory_mb << 20,
                     "num_gpus": 1 if gpus and set(assignment.gpu_tags) - tags else 0}
        reference = remote.options(name=f"grade {job.name}", max_retries=RETRIES, retry_exceptions=False,
                                   **resources).remote(dataclasses.replace(job, source=Path()), packed, options,
                                                      len(jobs) > 1)
        pending[reference] = index
        needs[reference] = resources
    stop = threading.Event()
    stranded = Stranded(ray)
    with _stop_on_signals(stop):
        while pending and not stop.is_set():
            done, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_SECONDS)
            for reference in done:
                index = pending.pop(reference)
                finished[index] = _collect(ray, reference, jobs[index], out / jobs[index].name)
                advance(bar, finished[index])
            for reference, problem in stranded.given_up({r: needs[r] for r in pending}).items():
                ray.cancel(reference, force=True)
                index = pending.pop(reference)
                finished[index] = not_graded(jobs[index], out / jobs[index].name, problem)
                advance(bar, finished[index])
    for reference in pending:  # stopped: what is queued never starts, what runs is killed
        ray.cancel(reference, force=True)
    bar.close()
    collected = [finished[index] for index in sorted(finished)]
    if stop.is_set():
        raise Interrupted(collected)
    return collected


class Stranded:
    """Which waiting tasks no live node of the cluster can run, and since when: Ray keeps such a task queued for ever
    (for an autoscaler to add a node), so a batch whose big nodes were lost would never end."""

    def __init__(self, ray):
        self.ray, self.patience, self.every = ray, STRANDED_SECONDS, NODES_SECONDS
        self.looked = float("-inf")
        self.since: dict = {}  # reference -> when it was first seen that no live node can run it

    def given_up(self, waiting: dict) -> dict:
        """Of ``waiting`` (reference -> the resources its task asked for: ``num_cpus``, ``memory`` in bytes,
        ``num_gpus``), those no live node has been able to run for ``patience`` seconds, each with why, in words."""
        now = time.monotonic()
        if now - self.looked < self.every:
            return {}
        self.looked = now
        nodes = [node.get("Resources", {}) for node in self.ray.nodes() if node.get("Alive")]
        for reference in list(self.since):
            if reference not in waiting:
                del self.since[reference]
        given_up = {}
        for reference, asked in waiting.items():
            if any(_holds(node, asked) for node in nodes):
                self.since.pop(reference, None)
            elif now - self.since.setdefault(reference, now) >= self.patience:
                given_up[reference] = (
                    f"no node of the cluster could run its grading for {self.patience:.0f} s (it needs "
                    f"{_words(asked)}; {len(nodes)} node(s) alive): the nodes that could were lost or never joined. "
                    "Add such a node and grade it again")
        return given_up


def _holds(node: dict, asked: dict) -> bool:
    """Whether a node with ``node``'s total resources (Ray's names: ``CPU``, ``memory``, ``GPU``) can run a task that
    asks for ``asked`` (``remote.options``'s names)."""
    return (node.get("CPU", 0) >= asked["num_cpus"] and node.get("memory", 0) >= asked["memory"]
            and node.get("GPU", 0) >= asked["num_gpus"])


def _words(asked: dict) -> str:
    gpu = f", {asked['num_gpus']:g} GPU" if asked["num_gpus"] else ""
    return f"{asked['num_cpus']:g} CPU(s), {asked['memory'] >> 20} MiB of memory{gpu}"


def _collect(ray, reference, job: Job, out_dir: Path) -> Results:
    """Write what a task returned into ``out_dir`` (its results through ``Results.write``) and return its results; a
    task that failed for good (its worker or node lost ``RETRIES + 1`` times, or the grader's own error) gets results
    that say so."""
    try:
        files = ray.get(reference)
    except ray.exceptions.RayError as exc:
        problem = f"its grading was lost on the cluster ({type(exc).__name__}: {str(exc).splitlines()[0][:300]})"
        out_dir.mkdir(parents=True, exist_ok=True)
        results = completed(None, job, problem)
        results.write(out_dir)
        return results
    results = None
    for relative, data in files.items():
        path = out_dir / relative
        if not path.resolve().is_relative_to(out_dir.resolve()):
            continue
        if relative == "results.json":  # written below, as every results file is (``Results.write``)
            results = parse_results(data)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    results = results or completed(None, job, "no results were written")
    results.write(out_dir)
    return results


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event):
    """Within the block, SIGINT and SIGTERM set ``stop`` (main thread only; elsewhere the defaults stay)."""
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for number in (signal.SIGINT, signal.SIGTERM):
            handlers[number] = signal.signal(number, lambda *_: stop.set())
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
