"""``check`` without Linux's layers (issue 34): macOS has no namespaces, Landlock, seccomp, control groups, ``prctl``,
pidfds or ``/proc``, and does not enforce ``RLIMIT_AS``. ``AUTOGRADER_LINUX=0`` gives a student's ``check`` that path
on Linux (``Isolation.portable``), and ``tests/support/not_linux.py`` takes those calls from the grader's own code, in
the ``check`` process and in every worker it starts, so that a layer used without a check for its absence fails here.

One process checks two submissions: the masking reference (full marks), and a wrong one (a mutant of the catalogue)
whose ``lecture_causal_candidate`` loops forever once and whose ``padding_mask`` hoards memory once (a marker file in
its folder says it did). The wrong one loses points, the loop is stopped by the test's time limit and the hog by the
grader's memory watch (``autograder.sandbox.memorywatch``), each with the message a student gets on Linux; ``check``
says in one line each which layers it went without. Every other command's isolation ignores the switch.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.catalogue import write_base
from support.submissions import MASKING, REPO

pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent.parent
CHECKED = """
import os, sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from support import not_linux
executable = not_linux.wrapper(Path({folder!r}), {log!r})
not_linux.simulate({log!r})
sys.executable = str(executable)
from autograder.cli import main
print("pid", os.getpid(), flush=True)
for folder in sys.argv[1:]:
    print("=== graded", flush=True)
    code = main(["check", "masking", folder])
    print("=== exit", code, flush=True)
"""
MISBEHAVING = """

def _once(marker):
    if os.path.exists(marker):
        return False
    open(marker, "w").close()
    return True


_candidate = lecture_causal_candidate


def lecture_causal_candidate():
    if _once("looped"):
        while True:
            pass
    return _candidate()


_padding_mask = padding_mask


def padding_mask(lengths, T):
    if _once("hoarded"):
        hoard = []
        while True:
            hoard.append(torch.ones(50_000_000))
    return _padding_mask(lengths, T)
"""


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict:
    """Both submissions checked in one simulated process: {"reference": output, "wrong": output, "stderr", "log"
    (the grader's refused calls, by process: "check" or "worker")}."""
    base = tmp_path_factory.mktemp("portable")
    reference = base / "reference"
    reference.mkdir()
    (reference / "masking.py").write_text((MASKING.solution_dir / "masking.py").read_text())
    wrong = write_base("masking", "mutant:softmax_wrong_axis", base / "wrong")
    own = wrong / "masking.py"
    own.write_text("import os\n" + own.read_text() + MISBEHAVING)
    log = base / "refused.log"
    log.touch()
    code = CHECKED.format(tests=str(TESTS), folder=str(base), log=str(log))
    run = subprocess.run([sys.executable, "-c", code, str(reference), str(wrong)], capture_output=True, text=True,
                         timeout=400, cwd=REPO, env={**os.environ, "AUTOGRADER_LINUX": "0", "COLUMNS": "400"})
    pid, *parts = run.stdout.split("=== graded")
    own_pid = pid.split()[1]
    refused = {"check": set(), "worker": set()}
    for line in log.read_text().splitlines():
        who, what = line.split(" ", 1)
        refused["check" if who == own_pid else "worker"].add(what)
    assert len(parts) == 2, run.stdout[-3000:] + run.stderr[-3000:]
    return {"reference": parts[0], "wrong": parts[1], "stderr": run.stderr, "refused": refused}


def _score(output: str) -> tuple[float, float]:
    found = re.search(r"Score: ([\d.]+) / ([\d.]+)", output)
    assert found, output[-3000:]
    return float(found.group(1)), float(found.group(2))


def _flat(output: str) -> str:
    return " ".join(output.split())


def test_the_reference_gets_full_marks(checked):
    score, most = _score(checked["reference"])
    assert score == most > 0, checked["reference"][-3000:]
    assert "=== exit 0" in checked["reference"]


def test_a_wrong_submission_loses_points_and_the_loop_and_the_hog_are_stopped(checked):
    output = _flat(checked["wrong"])
    score, most = _score(output)
    assert score < most and "=== exit 1" in output
    assert re.search(r"\[FAIL\] masked_softmax", output), output
    assert re.search(r"\[FAIL\] lecture_causal_candidate.*?did not finish within", output), output
    assert "killed for memory: all of its processes together may use at most 2048 MB" in output, output


def test_check_says_which_layers_it_went_without(checked):
    lines = [line for line in checked["stderr"].splitlines() if line.startswith("sandbox: ")]
    assert len(lines) == 2 * 5, checked["stderr"][-3000:]  # five lines, once per submission checked
    assert lines[0].startswith("sandbox: AUTOGRADER_LINUX=0: student code runs as your user"), lines


def test_the_grader_went_without_what_the_system_lacks(checked):
    """The simulation took calls from the grader (its trusted side looks for its children in /proc first, and asks
    to be a subreaper), and the workers, told by their plan, never asked for prctl or /proc."""
    refused = checked["refused"]
    assert "/proc/self/task" in refused["check"] and "prctl" in refused["check"], refused
    assert not {what for what in refused["worker"] if what == "prctl" or what.startswith("/proc")}, refused


def test_only_check_reads_the_switch(monkeypatch):
    """``AUTOGRADER_LINUX=0`` weakens nothing but a student's ``check``: the isolation every other command detects
    keeps Linux's layers (told what a batch found, so no probe runs)."""
    from autograder.sandbox import cgroups
    from autograder.sandbox.config import LANDLOCK_ENV, LINUX_ENV, NAMESPACES_ENV, SECCOMP_ENV
    from autograder.sandbox.isolation import Isolation

    for name, value in {LINUX_ENV: "0", NAMESPACES_ENV: "1", LANDLOCK_ENV: "6", SECCOMP_ENV: "1",
                        cgroups.ENV: "memory"}.items():
        monkeypatch.setenv(name, value)
    found = Isolation.detect.__wrapped__(Isolation)
    assert found.linux
    if os.geteuid() == 0:
        assert found == Isolation("namespaces", landlock=6, seccomp=True, cgroups=("memory",))
        assert found.skipped() == []


def test_each_missing_layer_is_one_line():
    from autograder.sandbox.isolation import Isolation

    assert Isolation("namespaces", landlock=6, seccomp=True, cgroups=("memory", "pids")).skipped() == []
    lines = Isolation("limits").skipped()
    assert [line.split(" (")[0].split(":")[0] for line in lines] == [
        "no namespaces or own uid", "no Landlock", "no system-call filter", "no control groups"]
    assert len(Isolation.portable().skipped()) == 5
