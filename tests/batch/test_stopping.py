"""Stopping is clean: a signal to ``autograder grade`` or ``autograder validate`` ends every runner and worker it
started within seconds, removes their folders and leaves results for what finished; a runner killed in the middle
of a grading still leaves every collected test in its results, the maximum unchanged."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support.machine import private_tmp
from support.submissions import reference_with

pytestmark = [pytest.mark.slow, pytest.mark.alone]
CLI = "import sys; from autograder.cli import main; sys.exit(main(sys.argv[1:]))"
SLOW = """
import time
_causal_mask = causal_mask


def causal_mask(T, device=None):
    time.sleep(10)
    return _causal_mask(T, device)
"""


@pytest.fixture(autouse=True, scope="module")
def _adopting():
    """This process adopts what the commands it starts leave behind (as a service manager or a CI runner may), so a
    process of theirs that outlives them shows here, a zombie included."""
    from autograder.sandbox.reaping import become_subreaper

    become_subreaper()


def _zombies() -> set[int]:
    return {child.pid for child in psutil.Process().children() if child.status() == psutil.STATUS_ZOMBIE}


def _grading_processes(zombies_before: set[int]) -> list[psutil.Process]:
    """This process's descendants that are runners, zygotes or workers (a forked one keeps its zygote's command line)
    or any sandbox uid's process, and any zombie left to this process since ``zombies_before``; not this process's own
    runner zygotes (a batch graded here keeps them) nor their spares (``forking.spares``, and what they forked ahead
    in turn). Whatever a command started here and left is a descendant: this process adopts orphans (``_adopting``),
    so other tests' gradings beside it are not counted."""
    from autograder import forking
    from autograder.batch.runners import ZYGOTES
    from autograder.sandbox.permissions import UID_POOL

    ours = {zygote.pid for zygote in ZYGOTES.values()}
    for pid in forking.spares():  # a runner forked ahead, with its workers' zygote and first worker
        with contextlib.suppress(psutil.NoSuchProcess):
            ours |= {pid} | {child.pid for child in psutil.Process(pid).children(recursive=True)}
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            command = " ".join(process.cmdline())
            uid, status = process.uids().real, process.status()
            adopted = (process.ppid() == os.getpid() and status == psutil.STATUS_ZOMBIE
                       and process.pid not in zombies_before)
            if process.pid not in ours and (any(f"autograder.{n}" in command for n in ("runner", "worker"))
                                            or uid in UID_POOL or adopted):
                found.append(process)
    return found


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def _grading_started(out: Path) -> bool:
    """A runner has listed its tests (its worker starts right after)."""
    return any(out.rglob("results.json"))


def _stop_while_grading(arguments: list[str], out: Path) -> tuple[int, float]:
    """Run the CLI, SIGTERM it once a grading runs; (exit status, seconds until every grading process was gone)."""
    zombies = _zombies()
    process = subprocess.Popen([sys.executable, "-c", CLI, *arguments], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    assert _wait_for(lambda: _grading_started(out), 120)
    time.sleep(1.0)
    stopped = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=60)
    assert _wait_for(lambda: not _grading_processes(zombies), 20), [str(p) for p in _grading_processes(zombies)]
    return code, time.monotonic() - stopped


def test_sigterm_stops_a_batch_and_everything_it_started(tmp_path):
    for index in range(3):
        reference_with(tmp_path / "submissions", f"slow{index}", SLOW)
    out = tmp_path / "out"
    with private_tmp() as scratch:
        code, seconds = _stop_while_grading(["grade", str(tmp_path / "submissions"), "--out", str(out), "--jobs", "2",
                                             "--quiet"], out)
        assert not list(scratch.iterdir()), "the batch's folders outlived it"
    assert code == 130 and seconds < 15
    stopped = [json.loads(path.read_text()) for path in out.glob("*/results.json")]
    assert stopped and all(data["extra_data"]["status"] == "incomplete: the grader was stopped" for data in stopped)
    assert all(data["extra_data"]["max_score"] == 59 for data in stopped), "every test is listed"
    assert (out / "gradebook.csv").is_file()


def test_sigterm_stops_validate(tmp_path):
    with private_tmp() as scratch:
        code, seconds = _stop_while_grading(["validate", "masking", "--jobs", "2", "--out",
                                             str(tmp_path / "validate")], tmp_path / "validate")
        assert not list(scratch.iterdir()), "validate's folders outlived it"
    assert code == 130 and seconds < 15


def test_a_killed_runner_leaves_every_test_listed(tmp_path):
    """SIGKILL to a runner in the middle of a grading: the batch completes the results file it had started."""
    from autograder import forking
    from autograder.batch.discovery import discover
    from autograder.batch.engine import grade_all
    from autograder.batch.runners import ZYGOTES

    source = reference_with(tmp_path, "slow", SLOW)
    job = discover([source], "masking")[0]
    zombies = _zombies()

    def kill_the_runner():
        _wait_for(lambda: _grading_started(tmp_path / "out"), 120)
        time.sleep(1.0)
        spared = {zygote.pid for zygote in ZYGOTES.values()} | forking.spares()
        for child in psutil.Process().children():  # the runner, started (cold) or forked and re-parented here (warm)
            if child.pid not in spared:
                child.kill()

    import threading

    killer = threading.Thread(target=kill_the_runner)
    killer.start()
    results = grade_all([job], tmp_path / "out", progress=False)[0]
    killer.join()
    assert results.extra_data["status"].startswith("incomplete: the grading process failed")
    assert results.max_score == 59 and results.score < 59
    assert any(t.extra_data.get("pending") for t in results.tests)
    assert _wait_for(lambda: not _grading_processes(zombies), 20), "the worker outlived its runner"
