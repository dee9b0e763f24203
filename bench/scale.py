"""A class at course scale on a Ray cluster of several nodes on this machine, one node killed mid-batch, and the class
report's similarity check at that size.

    python bench/scale.py [--size 500] [--throughput-size 40] [--similarity-size N] [--nodes 3] [--cpus 2]
                          [--skip-tag retraining --skip-tag runtime]

The class is synthetic (``tests/support/classmates.py``): the four assignments in turn, each student a base (the
reference, a bundled example but ``infinite_loop``, or a mutant of ``tests/mutants``) with their own small edits (local
variables renamed, comments, independent assignments swapped), so that the similarity check has copies to find through
edits.

1. Throughput per node count: the first ``--throughput-size`` students (all four assignments alike), graded on a
   fresh cluster of 1, 2, ... ``--nodes`` nodes, as submissions per hour.
2. Node loss: the whole class (``--size``) on ``--nodes`` nodes; once a third of it is graded, a node other than the
   head (which holds the cluster's control store) is killed while it grades, as a lost machine would be. Then every
   submission must have exactly one results file, with a final status (none lost on the cluster), each copy of a base
   the same score as every other copy (the edits change no behaviour), one gradebook row (but those not graded, which
   the gradebook leaves out), one summary row, and a report with a gradebook per assignment.
3. The class report: its time with the similarity check, and the similarity check alone on ``--similarity-size``
   students (the class by default) with the index (``similarity.candidates``) and with all pairs: the times and
   whether both found the same pairs. This class is near-copies of one reference per assignment, so nearly every
   pair is over the threshold and the index can leave none out; so, too:
4. ``--unrelated`` files that share little (modules of the installed packages, as if each were one student's
   ``masking.py``) with ten edited copies planted among them: the pairs the index proposes, the times with it and
   with all pairs, and whether both found the same pairs, planted copies included.

Every node is a separate raylet with its own CPUs (``ray.cluster_utils.Cluster``, as Ray's own multi-node tests
run), but they share this machine's cores: the throughput shows what several nodes cost and that they work
together, not a speed-up, which needs more machines. Not part of CI: it takes many minutes. Exit status 1 when a
check fails.
"""

from __future__ import annotations

import argparse
import csv
import logging
import os
import random
import re
import secrets
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from common import environment
from copydetect import CodeFingerprint

from autograder import course

sys.path.insert(0, str(course.REPO_ROOT / "tests"))
from support.classmates import edited, make_class  # noqa: E402 - the tests' synthetic class, shared with the similarity test

from autograder.batch import ray as ray_engine  # noqa: E402
from autograder.batch.discovery import Job, discover  # noqa: E402
from autograder.batch.engine import grade_all  # noqa: E402
from autograder.grading_options import GradingOptions  # noqa: E402
from autograder.report import page, similarity  # noqa: E402
from autograder.results import Results  # noqa: E402
from autograder.sandbox.isolation import Isolation  # noqa: E402

FINAL = ("graded", "does not load")  # the statuses a submission of this class may end with


class LocalCluster:
    """``nodes`` raylets on this machine with ``cpus`` CPUs each, the driver (this process) connected to the head."""

    def __init__(self, nodes: int, cpus: int):
        import ray
        from ray.cluster_utils import Cluster

        self.ray = ray
        began = time.monotonic()
        options = {"num_cpus": cpus, "object_store_memory": 100 << 20}
        self.cluster = Cluster(initialize_head=True, head_node_args={**options, "include_dashboard": False})
        self.workers = [self.cluster.add_node(**options) for _ in range(nodes - 1)]
        self.cluster.wait_for_nodes()
        ray.init(address=self.cluster.address, logging_level=logging.WARNING, log_to_driver=False)
        self.startup = time.monotonic() - began

    def kill_when(self, ready, victim) -> dict:
        """In a thread: once ``ready()``, kill node ``victim`` (all its processes, SIGKILL) while a grading runs on
        it; what it was grading is filled in the returned dict (``graded``: the task names, ``at``: when)."""
        killed: dict = {}
        raylet = victim.all_processes["raylet"][0].process.pid

        def watch():
            import psutil

            while not ready():
                time.sleep(0.2)
            while True:
                running = []
                try:
                    for process in psutil.Process(raylet).children(recursive=True):
                        command = process.cmdline()
                        if command and command[0].startswith("ray::grade") and process.children():
                            running.append(command[0].removeprefix("ray::grade ").strip())
                except psutil.Error:
                    pass
                if running:
                    killed["at"] = time.monotonic()
                    self.cluster.remove_node(victim, allow_graceful=False)
                    killed["graded"] = running
                    return
                time.sleep(0.05)

        threading.Thread(target=watch, daemon=True).start()
        return killed

    def stop(self) -> None:
        self.ray.shutdown()
        self.cluster.shutdown()


def grade(jobs: list[Job], out: Path, nodes: int, cpus: int, skip: tuple[str, ...],
          kill: bool = False) -> tuple[float, list[Results], dict]:
    """Grade ``jobs`` on a fresh cluster of ``nodes`` nodes: the seconds it took, the results, what was killed."""
    cluster = LocalCluster(nodes, cpus)
    print(f"  {nodes} node(s), {nodes * cpus} CPUs: started in {cluster.startup:.1f} s", flush=True)
    killed = {}
    if kill:
        third = len(jobs) // 3
        killed = cluster.kill_when(lambda: sum(1 for _ in out.glob("*/results.json")) >= third, cluster.workers[0])
    try:
        started = time.monotonic()
        collected = grade_all(jobs, out, GradingOptions(skip_tags=tuple(skip)), engine="ray", progress=False)
        seconds = time.monotonic() - started
    finally:
        cluster.stop()
    if killed:
        killed["after"] = killed["at"] - started
    return seconds, collected, killed


def check(jobs: list[Job], out: Path, collected: list[Results], bases: dict[str, str]) -> list[str]:
    """What is wrong with a batch's results and files (nothing: an empty list)."""
    problems = []
    names = [job.name for job in jobs]
    if sorted(r.submission for r in collected) != sorted(names):
        problems.append("the batch did not return one result per submission")
    folders = sorted(path.parent.name for path in out.glob("*/results.json"))
    if folders != sorted(names):
        problems.append(f"results files: {len(folders)} for {len(names)} submissions")
    for results in collected:
        status = str(results.extra_data.get("status", ""))
        if not status.startswith(FINAL):
            problems.append(f"{results.submission}: {status}")
    scores = defaultdict(set)
    for results in collected:
        scores[bases[results.submission]].add(results.score)
    problems += [f"copies of {base} scored {sorted(found)}" for base, found in scores.items() if len(found) > 1]
    with_tests = sorted(r.submission for r in collected if r.tests)
    if _column(out / "gradebook.csv") != with_tests:
        problems.append("gradebook.csv does not hold every graded submission exactly once")
    # The table's rows (the lines after it count and advise); names escaped for Markdown (sinks.inline), unescaped.
    summary = [re.sub(r"\\(.)", r"\1", line.split("|")[1].strip())
               for line in (out / "summary.md").read_text().splitlines()[2:] if line.startswith("|")]
    if sorted(summary) != sorted(names):
        problems.append("summary.md does not list every submission exactly once")
    return problems


def report(out: Path, collected: list[Results], sources: dict[str, Path]) -> tuple[float, list[str]]:
    """The class report with the similarity check: its seconds, and what is missing from it."""
    started = time.monotonic()
    page.write(out, collected, sources)
    seconds = time.monotonic() - started
    problems = [] if (out / "report.html").is_file() else ["no report.html"]
    for name in {r.assignment for r in collected}:
        expected = sorted(r.submission for r in collected if r.assignment == name and r.tests)
        if _column(out / f"gradebook-{name}.csv") != expected:
            problems.append(f"gradebook-{name}.csv does not hold every graded {name} submission exactly once")
    return seconds, problems


def compare_similarity(sources: dict[str, Path], by_assignment: dict[str, list[str]]) -> list[str]:
    """The similarity check per assignment with the index and with all pairs: prints the time to fingerprint the
    code, then to find the pairs each way; returns the assignments where the two found different pairs."""
    differ = []
    print("| assignment | students | fingerprints | pairs over the threshold | pairs proposed (of all) | index | "
          "all pairs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    totals = defaultdict(float)
    for name, members in sorted(by_assignment.items()):
        started = time.monotonic()
        prints = similarity.fingerprints(course.load(name), {m: sources[m] for m in members})
        fingerprinting = time.monotonic() - started
        totals["fingerprints"] += fingerprinting
        found, seconds = {}, {}
        for indexed in (True, False):
            started = time.monotonic()
            pairs, count = similarity.most_similar(prints, indexed=indexed)
            seconds[indexed] = time.monotonic() - started
            totals[indexed] += seconds[indexed]
            found[indexed] = (count, [(p.first, p.second, p.file, round(p.share, 6)) for p in pairs])
        if found[True] != found[False]:
            differ.append(name)
        print(f"| {name} | {len(members)} | {fingerprinting:.1f} s | {found[True][0]} (all pairs: {found[False][0]}) "
              f"| {_proposed(prints)} | {seconds[True]:.1f} s | {seconds[False]:.1f} s |", flush=True)
    print(f"similarity in all: fingerprints {totals['fingerprints']:.1f} s, then the pairs {totals[True]:.1f} s with "
          f"the index, {totals[False]:.1f} s with all pairs")
    return differ


def compare_unrelated(count: int, folder: Path) -> list[str]:
    """The similarity check on ``count`` unrelated Python files with ten edited copies of some planted: prints the
    pairs proposed and the times; returns what went wrong."""
    import numpy

    packages = Path(numpy.__file__).parent.parent
    files = [path for path in sorted(packages.rglob("*.py")) if 2000 < path.stat().st_size < 20000]
    chosen = files[::max(1, len(files) // count)][:count]
    rng = random.Random(0)
    folder.mkdir(parents=True)
    sources = {}
    for index, path in enumerate(chosen):
        sources[f"student-{index:04d}"] = path
    planted = {}
    for index, path in enumerate(chosen[:: max(1, len(chosen) // 10)][:10]):
        copy = folder / f"copy-{index}.py"
        copy.write_text(edited(path.read_text(errors="replace"), rng))
        planted[f"copy-{index}"] = next(name for name, source in sources.items() if source == path)
        sources[f"copy-{index}"] = copy
    started = time.monotonic()
    prints = {"masking.py": {name: CodeFingerprint(str(path), similarity.NOISE, similarity.WINDOW)
                             for name, path in sources.items()}}
    fingerprinting = time.monotonic() - started
    found, seconds = {}, {}
    for indexed in (True, False):
        started = time.monotonic()
        pairs, total = similarity.most_similar(prints, shown=10 ** 6, indexed=indexed)
        seconds[indexed] = time.monotonic() - started
        found[indexed] = {(p.first, p.second) for p in pairs}
    print(f"  {len(sources)} files ({len(planted)} planted copies): fingerprints {fingerprinting:.1f} s; "
          f"{_proposed(prints)} pairs proposed; {len(found[True])} pairs over the threshold (all pairs: "
          f"{len(found[False])}); {seconds[True]:.1f} s with the index, {seconds[False]:.1f} s with all pairs",
          flush=True)
    problems = [] if found[True] == found[False] else ["unrelated files: the index and all pairs found different pairs"]
    missed = [copy for copy, original in planted.items() if tuple(sorted((copy, original))) not in found[True]]
    return problems + ([f"planted copies not found: {missed}"] if missed else [])


def _proposed(prints: dict) -> str:
    proposed = sum(len(pairs) for pairs in similarity.candidates(prints).values())
    every = sum(len(by_name) * (len(by_name) - 1) // 2 for by_name in prints.values())
    return f"{proposed} of {every}"


def _column(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        return sorted(row["submission"] for row in csv.DictReader(handle))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=500, help="the class graded with a node killed")
    parser.add_argument("--throughput-size", type=int, default=40, help="the students graded per node count")
    parser.add_argument("--similarity-size", type=int, help="the class for the similarity check (default: --size)")
    parser.add_argument("--unrelated", type=int, default=500, help="unrelated files for the similarity check")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="each node's (lm asks for 2)")
    parser.add_argument("--skip-tag", action="append", dest="skip", default=None,
                        help="tests not run (default: retraining and runtime)")
    options = parser.parse_args(argv)
    skip = tuple(options.skip or ("retraining", "runtime"))
    similarity_size = options.similarity_size or options.size
    # Every node and this driver share one token (Ray authenticates every connection), on the loopback address; the
    # isolation is probed before the nodes are this process's children (autograder.batch.ray.connect says why).
    os.environ.update({"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
                       "RAY_AUTH_TOKEN": secrets.token_hex(32), "RAY_task_oom_retries": str(ray_engine.RETRIES)})
    Isolation.detect()
    print(environment(), f"| tests skipped: {', '.join(skip)}", flush=True)
    failures = []
    with tempfile.TemporaryDirectory(prefix="autograder-scale-") as temp:
        root = Path(temp)
        started = time.monotonic()
        bases = make_class(max(options.size, options.throughput_size, similarity_size), root / "class",
                           course.names())
        jobs = discover([root / "class"])
        jobs.sort(key=lambda job: int(job.name.split("-")[1]))  # as made: the assignments in turn
        print(f"a class of {len(jobs)} made in {time.monotonic() - started:.0f} s", flush=True)

        print(f"1. throughput, {options.throughput_size} students, {options.cpus} CPUs a node:")
        for nodes in range(1, options.nodes + 1):
            subset = jobs[:options.throughput_size]
            seconds, collected, _ = grade(subset, root / f"throughput-{nodes}", nodes, options.cpus, skip)
            failures += [f"throughput on {nodes}: {p}" for p in check(subset, root / f"throughput-{nodes}",
                                                                      collected, bases)]
            print(f"  {nodes} node(s): {len(subset)} in {seconds:.0f} s, {len(subset) / seconds * 3600:.0f} per hour",
                  flush=True)

        print(f"2. {options.size} students on {options.nodes} nodes, one killed after a third:")
        subset, out = jobs[:options.size], root / "class-graded"
        seconds, collected, killed = grade(subset, out, options.nodes, options.cpus, skip, kill=True)
        print(f"  {len(subset)} in {seconds:.0f} s, {len(subset) / seconds * 3600:.0f} per hour", flush=True)
        if killed:
            print(f"  node killed {killed['after']:.0f} s in, while grading {', '.join(killed['graded'])}")
            retried = [r for r in collected if r.submission in killed["graded"]]
            print("  their results: " + ", ".join(f"{r.submission} {r.score:g}/{r.max_score:g} "
                                                  f"({r.extra_data.get('status')})" for r in retried))
        else:
            failures.append("no node was killed: the batch ended first")
        problems = check(subset, out, collected, bases)
        failures += problems
        print(f"  one final result each, scores by base, gradebook, summary: {'; '.join(problems) or 'all right'}")

        print("3. the class report:")
        sources = {job.name: job.source for job in subset}
        seconds, problems = report(out, collected, sources)
        failures += problems
        print(f"  report.html with the similarity check, {len(subset)} students: {seconds:.1f} s; "
              f"{'; '.join(problems) or 'complete'}", flush=True)
        by_assignment = defaultdict(list)
        for job in jobs[:similarity_size]:
            by_assignment[job.assignment].append(job.name)
        differ = compare_similarity({job.name: job.source for job in jobs}, by_assignment)
        failures += [f"the index and all pairs found different pairs for {name}" for name in differ]
        print(f"4. the similarity check on {options.unrelated} unrelated files:")
        failures += compare_unrelated(options.unrelated, root / "unrelated")
    print("\n".join(["FAILED:", *failures]) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
