"""The Ray engine (``autograder grade --engine ray``) on a local Ray cluster of two worker processes, bound to
127.0.0.1: bundled examples and a hostile submission score exactly as the local engine scores them, and a batch
whose Ray workers are killed under it still ends with one results file per submission and no duplicate. On a
cluster of two nodes (separate raylets), a batch that loses a node mid-batch ends with every submission graded once.

The cluster is started once for the module (``ray.init`` in a helper process: two CPUs, no dashboard, a small object
store) and stopped at its end; everything is skipped, with a message, where Ray cannot be imported.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from support.catalogue import load
from support.submissions import REPO

from autograder.batch import ray as ray_engine
from autograder.results import read_results

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason='Ray is not installed: pip install -e ".[cluster]" to test the Ray engine'),
]

# Two CPUs and so two worker processes, no dashboard, the smallest object store Ray accepts; RAY_ENABLE_... keeps a
# single-machine cluster on the loopback address.
START = """
import sys, ray
ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=80 << 20,
         logging_level="WARNING")
print(ray.get_runtime_context().gcs_address, flush=True)
sys.stdin.read()
ray.shutdown()
"""
START_SECONDS = 120
# The cluster's token (Ray authenticates every connection), shared by the drivers this module starts.
ENVIRONMENT = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
               "RAY_AUTH_TOKEN": secrets.token_hex(32)}
# Not the retraining (minutes) nor the runtime tests: timed against the reference in the same run, their partial
# credit varies from run to run on a busy machine, whichever engine grades.
SKIP = ["--skip-tag", "retraining", "--skip-tag", "runtime"]
EXAMPLES = ["attention/partly_wrong", "masking/partly_wrong", "masking/syntax_error", "positions/partly_wrong",
            "lm/skeleton"]


class Cluster:
    def __init__(self):
        began = time.monotonic()
        self.process = subprocess.Popen([sys.executable, "-c", START], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=ENVIRONMENT, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], START_SECONDS)
        self.address = self.process.stdout.readline().strip() if ready else ""
        self.startup = time.monotonic() - began
        if not self.address.startswith("127.0.0.1:"):
            self.stop()
            pytest.fail(f"the local Ray cluster did not start on 127.0.0.1 (got {self.address!r})")

    def workers(self, task: str) -> list[psutil.Process]:
        """This cluster's worker processes now running the task named ``task``."""
        found = []
        for process in psutil.Process(self.process.pid).children(recursive=True):
            try:
                command = process.cmdline()  # read once: a process that exits between two reads lists nothing
                if command and command[0].rstrip("\0").startswith(f"ray::{task}"):
                    found.append(process)
            except psutil.Error:
                pass
        return found

    def stop(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def ray_cluster():
    started = Cluster()
    print(f"local Ray cluster started in {started.startup:.1f} s")
    yield started
    started.stop()


def grade(paths: list[Path], out: Path, *engine: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *map(str, paths), "--out", str(out),
                           "--jobs", "2", "--quiet", *SKIP, *engine], capture_output=True, text=True, timeout=900,
                          env=ENVIRONMENT)


def scores(out: Path) -> dict[str, list[str]]:
    """The gradebook by submission: the score, the maximum and every test's score."""
    with open(out / "gradebook.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    names = [row[0] for row in rows[1:]]
    assert len(names) == len(set(names)), f"a submission is in the gradebook twice: {names}"
    return {row[0]: [row[2], row[3], *row[6:]] for row in rows[1:]}


def test_examples_and_a_hostile_submission_score_as_locally(ray_cluster, tmp_path):
    """One example per kind of outcome and assignment (partial credit in each, a module that does not load, an lm
    grading, which asks for two CPUs) and a submission that forges results files, in one batch on each engine;
    `python bench/cluster.py` grades every example on both engines and compares too."""
    case = next(c for c in load() if c.label == "masking-forge_results_files")
    paths = [*(REPO / "examples" / name for name in EXAMPLES), case.materialize(tmp_path / "submissions",
                                                                                {"REPO": str(REPO)})]
    on_ray = grade(paths, tmp_path / "ray", "--engine", "ray", "--address", ray_cluster.address)
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    local = grade(paths, tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]
    expected = scores(tmp_path / "local")
    assert len(expected) == len(paths)
    assert scores(tmp_path / "ray") == expected
    assert expected[case.label][0] == "0.0"
    assert "forged" not in (tmp_path / "ray" / case.label / "results.json").read_text()
    for name in expected:
        assert (tmp_path / "ray" / name / "feedback.md").is_file()
        assert (tmp_path / "ray" / name / "runner.log").is_file()  # the grading's logs come back with its results


def test_a_jobs_own_secret_and_tests_reach_the_cluster(ray_cluster, tmp_path):
    """`autograder validate` grades jobs under their own secret, hidden tests only: on Ray exactly as here (the tests
    listed, their scores and messages, which name the inputs the secret drew; another secret draws others)."""
    script = f"""
import json, sys
from pathlib import Path
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.results import read_results
from autograder.grading_options import GradingOptions
source, out = Path({str(REPO / "examples" / "masking" / "partly_wrong")!r}), Path({str(tmp_path)!r})
job = Job("partly_wrong", source, "masking",
          options=GradingOptions(secret="another-term", hidden_only=True, skip_tags=("runtime",)))
graded = [grade_all([job], out / "ray", engine="ray", address=sys.argv[1], progress=False)[0],
          grade_all([job], out / "local", progress=False)[0],
          grade_all([Job("partly_wrong", source, "masking",
                         options=GradingOptions(hidden_only=True, skip_tags=("runtime",)))],
                          out / "committed", progress=False)[0]]
print(json.dumps([[[t.number, t.score, t.output] for t in results.tests] for results in graded]))
"""
    run = subprocess.run([sys.executable, "-c", script, ray_cluster.address], capture_output=True, text=True,
                         timeout=600, env=ENVIRONMENT)
    assert run.returncode == 0, run.stderr[-3000:]
    on_ray, local, committed = json.loads(run.stdout.splitlines()[-1])
    assert on_ray == local
    assert {number for number, _, _ in local} == {number for number, _, _ in committed}, "the hidden tests only"
    assert local != committed, "another secret draws other inputs"


def test_killed_workers(ray_cluster, tmp_path):
    """One grading's Ray worker is killed once: Ray runs it again and it is graded. Another's is killed every time it
    runs: after Ray's retries the driver gives it up with a results file that says so. Every submission has one
    results file and one gradebook row."""
    examples = REPO / "examples" / "masking"
    paths = [examples / name for name in ("partly_wrong", "syntax_error", "raises_at_import")]
    # The pids of the workers killed: a killed worker is listed until it is reaped, on a busy machine at the next look
    # too, and counts once.
    killed: dict[str, set[int]] = {"partly_wrong": set(), "syntax_error": set()}
    driver = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", *map(str, paths), "--out",
                               str(tmp_path / "ray"), "--quiet", "--engine", "ray", "--address", ray_cluster.address],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENVIRONMENT)
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(driver.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while driver.poll() is None and time.monotonic() < deadline:
        for name in killed:
            if name == "partly_wrong" and killed[name]:
                continue
            for process in ray_cluster.workers(f"grade {name}"):
                if process.pid not in killed[name] and process.children():  # its runner has started
                    process.send_signal(signal.SIGKILL)
                    killed[name].add(process.pid)
        time.sleep(0.05)
    if driver.poll() is None:
        driver.kill()
    reader.join(timeout=10)
    assert driver.returncode == 0, "".join(output)[-3000:]
    assert {name: len(pids) for name, pids in killed.items()} == {"partly_wrong": 1,
                                                                  "syntax_error": ray_engine.RETRIES + 1}
    graded = scores(tmp_path / "ray")
    assert sorted(graded) == sorted(p.name for p in paths)
    for path in paths:
        assert (tmp_path / "ray" / path.name / "results.json").is_file()
    retried = read_results(tmp_path / "ray" / "partly_wrong" / "results.json")
    assert retried.extra_data["status"] == "graded" and 0 < retried.score < retried.max_score
    lost = read_results(tmp_path / "ray" / "syntax_error" / "results.json")
    assert lost.extra_data["status"].startswith("incomplete: its grading was lost on the cluster")
    assert lost.score == 0 and "could not finish" in lost.output


def test_isolation_is_probed_before_a_local_cluster_starts(monkeypatch):
    """The probe's sandbox reaps its process's children when it stops: a local cluster started first would be killed
    (the Ray processes are children of the process that starts them)."""
    import ray

    from autograder.sandbox.isolation import Isolation

    probed = []
    Isolation.detect.__func__.cache_clear()
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **_: probed.append(Isolation.detect.__func__.cache_info().currsize))
    ray_engine.connect(None)
    assert probed == [1]


# Two nodes of one CPU each, separate raylets on this machine (as Ray's multi-node tests run them); the driver connects
# to the head. A line on its standard input kills the other node, every process of it, as a lost machine would be.
# The head's health checks find a dead node within 2 s (Ray's default: up to about 30 s, which the test would wait).
NODES = """
import sys
from ray.cluster_utils import Cluster
options = {"num_cpus": 1, "object_store_memory": 80 << 20}
checks = {"health_check_period_ms": 1000, "health_check_failure_threshold": 2}
cluster = Cluster(initialize_head=True, head_node_args={**options, "include_dashboard": False,
                                                         "_system_config": checks})
node = cluster.add_node(**options)
cluster.wait_for_nodes()
print(cluster.address, node.all_processes["raylet"][0].process.pid, flush=True)
sys.stdin.readline()
cluster.remove_node(node, allow_graceful=False)
print("removed", flush=True)
sys.stdin.read()
cluster.shutdown()
"""
# A job that asks for 2 CPUs (lm's threads) on a cluster whose nodes have one: given up once it has waited STRANDED.
STRANDED = """
import sys
from pathlib import Path
from autograder.batch import ray as engine
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
engine.STRANDED_SECONDS, engine.NODES_SECONDS = 1.0, 0.2
[results] = grade_all([Job("lm-skeleton", Path(sys.argv[2]), "lm")], Path(sys.argv[3]), engine="ray",
                      address=sys.argv[1], progress=False)
print(results.extra_data["status"])
"""
NODE_LOSS = ["attention/partly_wrong", "positions/partly_wrong", "positions/correct"]


def test_a_node_lost_mid_batch(tmp_path):
    """A node is killed while it grades: what it was grading is graded again on the node left, and every submission
    has one results file, with a final status, and one gradebook and summary row. A task that no node left can run
    (it asks for more CPUs than any has) is given up with a "not graded" result that says what it needs, instead of
    waiting for ever. `python bench/scale.py` does the same with a class of hundreds on three nodes."""
    helper = subprocess.Popen([sys.executable, "-c", NODES], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=ENVIRONMENT, text=True)
    try:
        ready, _, _ = select.select([helper.stdout], [], [], START_SECONDS)
        address, raylet = helper.stdout.readline().split() if ready else ("", "0")
        assert address.startswith("127.0.0.1:"), f"the two-node cluster did not start (got {address!r})"
        paths = [REPO / "examples" / name for name in NODE_LOSS]
        names = [f"{path.parent.name}-{path.name}" for path in paths]
        for path, name in zip(paths, names, strict=True):
            shutil.copytree(path, tmp_path / "class" / name, symlinks=True)
        driver = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", str(tmp_path / "class"), "--out",
                                   str(tmp_path / "ray"), "--quiet", *SKIP, "--engine", "ray", "--address", address],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENVIRONMENT)
        output: list[str] = []
        reader = threading.Thread(target=lambda: output.extend(driver.stdout), daemon=True)
        reader.start()
        killed = ""
        deadline = time.monotonic() + 300
        while not killed and driver.poll() is None and time.monotonic() < deadline:
            for process in psutil.Process(int(raylet)).children(recursive=True):
                try:
                    command = process.cmdline()
                    if command and command[0].startswith("ray::grade") and process.children():  # its runner started
                        killed = command[0].removeprefix("ray::grade").strip()
                        break
                except psutil.Error:
                    pass
            time.sleep(0.05)
        assert killed, "nothing ran on the node to kill: " + "".join(output)[-3000:]
        helper.stdin.write("kill\n")
        helper.stdin.flush()
        assert helper.stdout.readline().strip() == "removed"
        driver.wait(timeout=deadline - time.monotonic())
        reader.join(timeout=10)
        assert driver.returncode == 0, "".join(output)[-3000:]
        graded = scores(tmp_path / "ray")
        assert sorted(graded) == sorted(names)
        summary = (tmp_path / "ray" / "summary.md").read_text()
        for name in names:
            results = read_results(tmp_path / "ray" / name / "results.json")
            assert results.extra_data["status"] == "graded", (name, results.extra_data["status"])
            assert summary.count(f"| {name} |") == 1
        assert read_results(tmp_path / "ray" / killed / "results.json").score > 0, killed
        stranded = subprocess.run([sys.executable, "-c", STRANDED, address, str(REPO / "examples" / "lm" / "skeleton"),
                                   str(tmp_path / "stranded")], capture_output=True, text=True, timeout=300,
                                  env=ENVIRONMENT)
        assert stranded.returncode == 0, stranded.stderr[-3000:]
        status = stranded.stdout.splitlines()[-1]
        assert status.startswith("not graded: no node of the cluster could run its grading") and "2 CPU(s)" in status
    finally:
        helper.stdin.close()
        try:
            helper.wait(timeout=30)
        except subprocess.TimeoutExpired:
            helper.kill()
            helper.wait()


def test_stranded_counts_only_live_nodes_big_enough(monkeypatch):
    """A task is given up only once no live node has had its CPUs, memory and GPU for the whole patience: a dead
    node's resources do not count, a node that joins in time saves it, and one big enough in one resource only
    does not."""
    clock = [0.0]
    monkeypatch.setattr(ray_engine.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(ray_engine, "STRANDED_SECONDS", 60.0)
    monkeypatch.setattr(ray_engine, "NODES_SECONDS", 5.0)
    small = {"Alive": True, "Resources": {"CPU": 1.0, "memory": 16 << 30}}
    big_but_dead = {"Alive": False, "Resources": {"CPU": 8.0, "memory": 64 << 30}}
    few_bytes = {"Alive": True, "Resources": {"CPU": 8.0, "memory": 1 << 30}}
    nodes = [small, big_but_dead, few_bytes]
    stranded = ray_engine.Stranded(type("Ray", (), {"nodes": staticmethod(lambda: nodes)}))
    lm = {"num_cpus": 2, "memory": 4096 << 20, "num_gpus": 0}
    masking = {"num_cpus": 1, "memory": 2048 << 20, "num_gpus": 0}
    assert stranded.given_up({"lm": lm, "masking": masking}) == {}
    clock[0] = 61.0
    given_up = stranded.given_up({"lm": lm, "masking": masking})
    assert list(given_up) == ["lm"] and "2 CPU(s), 4096 MiB of memory" in given_up["lm"]
    clock[0] = 62.0
    assert stranded.given_up({"lm": lm}) == {}, "the nodes are looked at every NODES_SECONDS only"
    clock[0] = 70.0
    assert stranded.given_up({"later": lm}) == {}, "a task's patience starts when it is first seen stranded"
    nodes.append({"Alive": True, "Resources": {"CPU": 2.0, "memory": 8 << 30}})
    clock[0] = 140.0
    assert stranded.given_up({"later": lm}) == {}, "a node that joined runs it"
