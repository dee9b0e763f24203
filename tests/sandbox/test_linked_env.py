"""Grading from an environment or a checkout reached through a symbolic link (issue 35), and runners that fail to
start: each says what went wrong in its log.

A worker in namespaces sees the interpreter's folders bound where they really are; ``sys.prefix`` and ``sys.path`` name
them as they were reached. Through a link that name led nowhere in the sandbox: whatever the worker imported once
confined failed ("No module named 'numpy.random'", blamed on the student). A checkout whose ``.venv`` links to another
checkout's environment imports its own harness in the command (``python -m``), and its runners imported the other
one's: every submission of an assignment only this checkout has was graded 0/0."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support.machine import needs_root
from support.submissions import REPO

from autograder import forking
from autograder.authoring import scaffold
from autograder.batch.discovery import Job
from autograder.batch.jobs import grade_job
from autograder.batch.runners import Runners
from autograder.sandbox.isolation import Isolation
from autograder.worker import confine

pytestmark = pytest.mark.slow  # each test starts interpreters that import torch: make test runs this file early

ENVIRONMENT = Path(sys.prefix).resolve()

# A submission that imports, once confined, what its worker had not imported before (numpy's random module, an
# e-mail module of the standard library), and says where each came from.
LATE_IMPORTS = """
def late_imports():
    import email.mime.text
    import numpy.random
    return [numpy.random.__file__, email.mime.text.__file__]
"""

# Started with the interpreter under test: one worker, cold (as this process's Python names its folders), asked for the
# late imports.
ASK = """
import sys
from pathlib import Path
from autograder.grading.proxy import Student
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation
from autograder.worker import confine
student = Student(Path(sys.argv[1]), [{"name": "probe"}], Limits(), Isolation.detect())
try:
    print(sys.prefix, *student.probe.late_imports())
finally:
    student.close()
"""


@pytest.fixture
def submission():
    """The submission, staged as a batch stages one: in a folder a sandbox uid passes through."""
    staged = Path(tempfile.mkdtemp(prefix="linked-env-"))
    os.chmod(staged, 0o711)
    (staged / "submission").mkdir()
    (staged / "submission" / "probe.py").write_text(LATE_IMPORTS)
    yield staged / "submission"
    shutil.rmtree(staged)


@needs_root
def test_a_worker_imports_through_a_linked_checkout_and_environment(tmp_path, submission):
    """The interpreter started through a linked checkout whose ``.venv`` links to the environment: the worker, in the
    mode this machine gives root (namespaces here), imports numpy.random and the standard library through that name.
    Without the links made again in its root, the worker did not even start (torch is imported once confined)."""
    (tmp_path / "checkout-real").mkdir()
    (tmp_path / "checkout-real" / ".venv").symlink_to(ENVIRONMENT)
    (tmp_path / "checkout").symlink_to(tmp_path / "checkout-real")
    python = tmp_path / "checkout" / ".venv" / "bin" / "python"
    run = subprocess.run([str(python), "-c", ASK, str(submission)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "AUTOGRADER_COLD": "1"}, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    prefix, numpy_random, email = run.stdout.split()
    assert prefix == str(tmp_path / "checkout" / ".venv") and numpy_random.startswith(prefix), run.stdout
    assert email.endswith("email/mime/text.py")


@needs_root
def test_a_checkout_whose_environment_is_another_checkouts_grades_its_own_assignments(tmp_path):
    """A copy of the harness holding an assignment the environment's own checkout lacks, its ``.venv`` a link to that
    environment, graded with ``python -m autograder.cli`` from the copy: its runners import the copy's harness too."""
    clone = tmp_path / "clone"
    shutil.copytree(REPO / "autograder", clone / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    (clone / ".venv").symlink_to(ENVIRONMENT)
    for path, text in scaffold.files("linkedtoy").items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_text(text)
    run = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "autograder.cli", "grade",
                          str(clone / "solutions" / "linkedtoy"), "--out", str(tmp_path / "out"), "--public-only",
                          "--quiet"], capture_output=True, text=True, timeout=300, cwd=clone)
    log = (tmp_path / "out" / "linkedtoy" / "runner.log").read_text()
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:] + log
    results = json.loads((tmp_path / "out" / "linkedtoy" / "results.json").read_text())
    assert results["score"] == results["extra_data"]["max_score"] == 3, log


def test_a_runner_that_ends_without_a_word_leaves_what_the_batch_saw_in_its_log(tmp_path):
    """A runner that exits (status 1) having printed nothing: its log says so, where it was left empty."""

    class Runners:
        stopping = False
        isolation = Isolation("limits")

        def start(self, spec, log):
            return subprocess.Popen(["false"], stdout=log, stderr=subprocess.STDOUT)

        def finish(self, process):
            pass

    results = grade_job(Job("silent", REPO / "solutions" / "masking", "masking"), tmp_path / "silent",
                        runners=Runners())
    assert results.reason == "the grading process failed (exit status 1)"
    assert (tmp_path / "silent" / "runner.log").read_text() == (
        "autograder: the grading process failed (exit status 1), having written nothing here\n")


def test_a_runner_zygote_that_died_before_its_request_leaves_the_runner_to_start_cold(tmp_path, monkeypatch):
    """A runner zygote that dies after the batch saw it alive (its imports failed, say): the runner starts as a new
    interpreter, which says in its log what went wrong (before, the broken pipe brought the whole batch down)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    dead = subprocess.Popen([sys.executable, "-c", "pass"], pass_fds=(theirs.fileno(),))
    theirs.close()
    dead.wait()
    runners = Runners(Isolation("limits"))
    monkeypatch.setattr(runners, "zygote", lambda: forking.Zygote(dead.pid, ours, dead))
    with runners.stop_on_signals(signals=False), open(tmp_path / "runner.log", "wb") as log:
        process = runners.start({"assignment": "no-such-assignment", "submission": str(tmp_path), "name": "x"}, log)
        process.wait(timeout=120)
        runners.finish(process)
    assert isinstance(process, subprocess.Popen) and process.returncode != 0
    assert "no-such-assignment" in (tmp_path / "runner.log").read_text()


def test_the_links_on_the_way_are_found_and_a_loop_of_links_ends(tmp_path, monkeypatch):
    """Every link met resolving the environment's name, a link inside a link's target too; a loop ends."""
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "venv").symlink_to(ENVIRONMENT)
    (tmp_path / "home").symlink_to("real")  # relative, as `ln -s real home` makes it
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "home" / "venv"))
    found = confine._links()  # with any link on the way to sys.base_prefix on this machine
    assert found.items() >= {str(tmp_path / "home"): "real", str(tmp_path / "real" / "venv"): str(ENVIRONMENT)}.items()
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "a" / "venv"))
    assert confine._links().items() >= {str(tmp_path / "a"): "b", str(tmp_path / "b"): "a"}.items()
