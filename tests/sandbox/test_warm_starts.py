"""Warm starts (``autograder.forking``): a forked worker computes what a started one does, a zygote refuses to fork
where a thread pool or a CUDA context would be copied, and the cold path stays available to compare; the worker's
handshake holds its order however the processes are scheduled."""

from __future__ import annotations

import contextlib
import ctypes
import json
import mmap
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
from support.submissions import MASKING, reference_with

from autograder import course, forking, protocol
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.batch.jobs import grade_job
from autograder.batch.runners import ZYGOTES, Runners, close_zygotes
from autograder.grading_options import GradingOptions
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.process import Sandbox, SandboxError

pytestmark = pytest.mark.slow

# Run in a fresh interpreter: the workers' zygote needs a process that runs one thread, which pytest's is not always.
SAME_RESULTS = textwrap.dedent("""
    import json, os, shutil, sys, tempfile
    from pathlib import Path
    import psutil
    from autograder.sandbox.process import Sandbox
    from autograder.sandbox import zygote as worker_zygote
    from autograder.grading.proxy import Student
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation

    folder = Path(tempfile.mkdtemp(prefix="autograder-warm-")) / "submission"  # staged as a runner stages
    folder.mkdir()
    (folder / "heavy.py").write_text(
        "import torch\\n"
        "def run():\\n"
        "    g = torch.Generator().manual_seed(0)\\n"
        "    a = torch.randn(512, 512, generator=g, dtype=torch.float64)\\n"
        "    return (a @ a.T).sum(dim=0)[:8].tolist(), torch.get_num_threads()\\n"
        "def frozen():\\n"
        "    import gc\\n"
        "    return gc.get_freeze_count()\\n"
        "def pid():\\n"
        "    import os\\n"
        "    return os.getpid()\\n"
        "def plots():\\n"
        "    import sys\\n"
        "    return 'matplotlib.pyplot' in sys.modules\\n")
    answers = {}
    for mode in ("warm", "cold"):
        if mode == "warm":
            assert worker_zygote.start() is not None, "this process should be able to fork a zygote"
        else:
            worker_zygote.close()  # workers start cold from here on
        student = Student(folder, [{"name": "heavy"}], Limits(threads=2), Isolation.detect())
        answers[mode] = student.heavy.run()
        answers[mode + " frozen"] = student.heavy.frozen()
        answers[mode + " plots"] = student.heavy.plots()
        answers[mode + " forked"] = type(student._channel.process).__name__ == "Forked"
        # Processes between the grader and the worker: none where forked; where started, a stand-by in namespaces mode.
        answers[mode + " pid"] = student.heavy.pid()
        depth = len(psutil.Process(student._channel.pid).parents())
        answers[mode + " between"] = depth - len(psutil.Process().parents()) - 1
        student.close()
    shutil.rmtree(folder.parent)
    print(json.dumps(answers))
""")


def test_a_forked_worker_computes_what_a_started_one_does():
    answers = json.loads(subprocess.run([sys.executable, "-c", SAME_RESULTS], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers["warm forked"] and not answers["cold forked"]
    assert answers["warm"] == answers["cold"] and answers["warm"][1] == 2
    # What the zygote held is frozen in the worker: its collections leave the pages it shares with the zygote alone.
    assert answers["warm frozen"] > 0 and answers["cold frozen"] == 0
    assert answers["warm plots"], "by default the zygote has pyplot ready made for notebooks"
    if Isolation.detect().mode == "namespaces":  # init of its PID namespace either way (its processes die with it)
        assert answers["warm pid"] == answers["cold pid"] == 1
        assert (answers["warm between"], answers["cold between"]) == (0, 1)
    else:
        assert answers["warm between"] == answers["cold between"] == 0


PLOTLESS = textwrap.dedent("""
    import json, shutil, tempfile
    from pathlib import Path
    from autograder.sandbox.process import Sandbox
    from autograder.sandbox import zygote as worker_zygote
    from autograder.grading.proxy import Student
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation

    folder = Path(tempfile.mkdtemp(prefix="autograder-warm-")) / "submission"
    folder.mkdir()
    (folder / "plain.py").write_text("import sys\\ndef plots():\\n    return 'matplotlib.pyplot' in sys.modules\\n")
    assert worker_zygote.start(plots=False) is not None
    student = Student(folder, [{"name": "plain"}], Limits(), Isolation.detect())
    print(json.dumps({"plots": student.plain.plots(), "forked": type(student._channel.process).__name__ == "Forked"}))
    student.close()
    shutil.rmtree(folder.parent)
""")


def test_a_check_without_notebooks_forks_its_workers_from_a_zygote_without_pyplot():
    """``check`` reads the assignment's toml before it forks its workers' zygote; without notebooks the zygote skips
    pyplot (a third of its imports, on the student's wait)."""
    assert {name for name in course.names() if course.load(name).notebooks} == {"attention", "positions"}
    assert course.load("positions").notebooks == ["positions.ipynb"] and not course.load("masking").notebooks
    answers = json.loads(subprocess.run([sys.executable, "-c", PLOTLESS], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers == {"plots": False, "forked": True}


SPARES = textwrap.dedent("""
    import json, os, shutil, signal, tempfile, time
    from pathlib import Path
    from autograder import forking
    from autograder.sandbox.process import Sandbox
    from autograder.sandbox import zygote as worker_zygote
    from autograder.grading.proxy import Student
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation

    def spare():
        # The zygote's spare, once forked and adopted (the next one is forked after each answer).
        deadline = time.monotonic() + 20
        while not forking.spares() and time.monotonic() < deadline:
            time.sleep(0.01)
        return forking.spares()

    def worker():
        student = Student(folder, [{"name": "tiny"}], Limits(), Isolation.detect())
        answers["descriptors"] = student.tiny.descriptors()
        return student, student.tiny.twice(21), student._channel.process.pid

    folder = Path(tempfile.mkdtemp(prefix="autograder-warm-")) / "submission"
    folder.mkdir()
    (folder / "tiny.py").write_text(
        "import fcntl, os\\n"
        "def twice(x):\\n"
        "    return 2 * x\\n"
        "def descriptors():\\n"
        "    found = []\\n"
        "    for name in os.listdir('/proc/self/fd'):\\n"
        "        try:\\n"
        "            fcntl.fcntl(int(name), fcntl.F_GETFD)\\n"
        "            found.append(int(name))\\n"
        "        except OSError:\\n"
        "            pass\\n"
        "    return sorted(found)\\n")
    assert worker_zygote.start() is not None
    answers = {}
    for turn in ("first", "second"):
        ahead = spare()
        student, answers[turn], pid = worker()
        answers[turn + " was the spare"] = ahead == {pid} and pid not in forking.spares()
        student.close()  # reaps what the worker left, which a spare is not
    answers["spare kept"] = len(spare()) == 1 and spare() <= forking.child_pids()
    for pid in spare():  # killed: the next request forks one
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    student, answers["after a killed spare"], _ = worker()
    student.close()
    spare()
    worker_zygote.close()  # collects the zygote and its spare, zombies included
    answers["children left"] = sorted(forking.child_pids())
    shutil.rmtree(folder.parent)
    print(json.dumps(answers))
""")


def test_a_spare_forked_ahead_is_handed_each_request_and_a_lost_one_costs_a_fork():
    """The zygote forks each child ahead of its request (``autograder.forking``): a request is handed the spare,
    whose forks are done, and the worker holds only its own descriptors; reaping a worker's leftovers spares it; a
    spare killed costs a fork, not the worker; closing the zygote collects its spare."""
    answers = json.loads(subprocess.run([sys.executable, "-c", SPARES], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers["first"] == answers["second"] == answers["after a killed spare"] == 42
    assert answers["first was the spare"] and answers["second was the spare"]
    assert answers["spare kept"] and answers["children left"] == []
    assert answers["descriptors"] == [0, 1, 2, 3, 4], "a worker holds its pipes and nothing of the zygote's"


@pytest.mark.parametrize("setup", [
    "import threading, time; threading.Thread(target=time.sleep, args=(5,), daemon=True).start()",
    "import torch; torch.cuda.is_initialized = lambda: True",
])
def test_a_zygote_refuses_to_fork_a_thread_pool_or_a_cuda_context(setup):
    code = (f"{setup}\nfrom autograder import forking\nfrom autograder.sandbox import zygote as worker_zygote\n"
            "try:\n    forking.fork_ready()\nexcept forking.ForkRefused as exc:\n    print('refused:', exc)\n"
            "print('zygote:', worker_zygote.start())")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "refused:" in output and "zygote: None" in output  # the worker then starts cold


def _kernel_collapses() -> bool:
    """Whether this kernel moves memory into huge pages on request (MADV_COLLAPSE, Linux 6.1+), tried on a mapping
    of its own."""
    size = 4 * forking.HUGE_PAGE
    with mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) as memory:
        memory.write(b"x" * size)
        pointer = ctypes.c_char.from_buffer(memory)
        offset = -ctypes.addressof(pointer) % forking.HUGE_PAGE
        del pointer
        try:
            memory.madvise(forking.MADV_COLLAPSE, offset, forking.HUGE_PAGE)
        except OSError:
            return False
    return True


COLLAPSE = textwrap.dedent("""
    import json, os
    from autograder import forking
    memory = bytearray(os.urandom(1 << 20) * 64)
    kept = bytes(memory)
    huge = forking.collapse_memory()
    pid = os.fork()
    if pid == 0:
        same = memory == kept
        memory[::4096] = bytes(len(memory[::4096]))  # splits every huge page it writes, and copies the page
        os._exit(0 if same and memory != kept else 1)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"huge": huge, "child": os.waitstatus_to_exitcode(status), "kept": memory == kept}))
""")


@pytest.mark.skipif(not _kernel_collapses(), reason="this kernel does not move memory into huge pages on request")
def test_collapsed_memory_is_in_huge_pages_and_forks_share_it_copy_on_write():
    """``collapse_memory`` moves a zygote's heap into 2 MiB pages; a child reads what the zygote held and its writes
    stay its own."""
    answers = json.loads(subprocess.run([sys.executable, "-c", COLLAPSE], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers["huge"] >= 32 << 20, "most of the 64 MB held is in huge pages"
    assert answers["child"] == 0 and answers["kept"]


def test_warm_and_cold_batches_grade_alike(tmp_path, monkeypatch):
    """The same scores either way; and a warm batch's next runner, forked ahead, has forked its workers' zygote while
    it waits (``forking.serve``'s ``prepare``), which has forked its first worker ahead in turn. The runner zygote of
    a batch of two holds its memory in huge pages, where the kernel can move it, and a lone job's does not."""
    source = reference_with(tmp_path, "partly", "def masked_softmax(scores, mask=None):\n    return scores\n")
    scores = {}
    close_zygotes()  # this process's earlier tests' zygotes: the batch starts its own
    for cold in ("0", "1"):
        monkeypatch.setenv("AUTOGRADER_COLD", cold)
        jobs = [Job(f"partly-{number}", source, MASKING.name) for number in range(2)]
        collected = grade_all(jobs, tmp_path / f"out-{cold}", GradingOptions(public_only=True), progress=False)
        scores[cold] = [{t.number: t.score for t in results.tests} for results in collected]
        if cold == "0":
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not _prepared(forking.spares()):
                time.sleep(0.05)
            assert _prepared(forking.spares()), "the next runner has forked its workers' zygote, and it a worker"
            if _kernel_collapses():
                [zygote] = ZYGOTES.values()
                assert forking.rollup_bytes(zygote.pid, "AnonHugePages") >= 64 << 20
                close_zygotes()
                assert grade_job(jobs[0], tmp_path / "lone") is not None
                [zygote] = ZYGOTES.values()
                if "[always]" not in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text():
                    lone = forking.rollup_bytes(zygote.pid, "AnonHugePages")
                    assert lone == 0, "a lone job's runner does not wait for the move"
    assert scores["0"] == scores["1"] and all(0 < sum(s.values()) < sum(t.max_score for t in collected[0].tests)
                                              for s in scores["0"])


def _prepared(spares: set[int]) -> bool:
    """Whether one of ``spares`` has two children: its workers' zygote, and the first worker it forked ahead (adopted
    by the runner-to-be, as every child of a zygote is by the process that asks it)."""
    for pid in spares:
        with contextlib.suppress(psutil.Error):
            if len(psutil.Process(pid).children()) == 2:
                return True
    return False


# The worker outside its PID namespace reports the pid; delay it, as a loaded machine may after the fork.
SLOW_REPORT = textwrap.dedent("""
    import json, shutil, tempfile, time
    from pathlib import Path
    from autograder import forking
    from autograder.sandbox.process import Sandbox
    from autograder.sandbox import zygote as worker_zygote
    from autograder.grading.proxy import Student
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation
    from autograder.worker import confine

    stand_by = confine._stand_by
    confine._stand_by = lambda *args: (time.sleep(0.5), stand_by(*args))
    # A started worker's way into its namespace (a forked one is born there): it forks, and its parent reports.
    spawn, plan = forking.Zygote.spawn, Sandbox.plan
    forking.Zygote.spawn = lambda zygote, *args, pid_namespace, **named: spawn(zygote, *args, **named)
    Sandbox.plan = lambda box: {**plan(box), "init": False}
    folder = Path(tempfile.mkdtemp(prefix="autograder-warm-")) / "submission"
    folder.mkdir()
    (folder / "tiny.py").write_text("def twice(x):\\n    return 2 * x\\n")
    assert worker_zygote.start() is not None
    student = Student(folder, [{"name": "tiny"}], Limits(), Isolation.detect())
    print(json.dumps({"answer": student.tiny.twice(21), "pid": student._channel.worker_pid}))
    student.close()
    shutil.rmtree(folder.parent)
""")


@pytest.mark.skipif(Isolation.detect().mode != "namespaces", reason="only a worker in a PID namespace reports late")
def test_a_worker_waits_for_its_pid_to_be_reported_before_it_answers():
    """Once, under load, a worker ran ahead of the pid report: the grader took the late pid frame for the load's
    reply, and a correct submission read "importing masking.py raised Exception: "."""
    answers = json.loads(subprocess.run([sys.executable, "-c", SLOW_REPORT], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers["answer"] == 42 and isinstance(answers["pid"], int)


def _fed(tmp_path, *frames) -> Sandbox:
    """A sandbox whose worker pipe already holds ``frames``, as if its worker had sent them."""
    box = Sandbox(tmp_path, {}, Limits(), Isolation.detect())
    box.private = tmp_path
    _, box._requests = os.pipe()  # nobody reads the request: it fits the pipe's buffer
    box._replies, write = os.pipe()
    for frame in frames:
        protocol.write_frame(write, frame)
    return box


def test_a_handshake_out_of_order_is_the_graders_failure(tmp_path):
    with pytest.raises(SandboxError, match="not the worker's pid"):
        _fed(tmp_path, {"ready": True}, {"pid": 7})._handshake()


@pytest.mark.parametrize("reply", [{"pid": 7}, {"ok": False}, {"ok": 1, "value": 2}, {"ok": False, "error": "x"}])
def test_a_reply_that_is_neither_an_answer_nor_an_error_breaks_the_channel(tmp_path, reply):
    with pytest.raises(protocol.ProtocolError, match="neither an answer nor an error"):
        _fed(tmp_path, reply).request({"op": "load"}, [], time.monotonic() + 5)


def test_a_batch_collects_what_its_runners_leave_as_it_goes(tmp_path, monkeypatch):
    """Each runner's workers' zygote and its spare die with the runner and are re-parented to the batch: collected as
    the batch goes, not left as zombies until it ends (two per submission before)."""
    monkeypatch.setenv("AUTOGRADER_COLD", "0")
    source = reference_with(tmp_path, "partly", "def masked_softmax(scores, mask=None):\n    return scores\n")
    jobs = [Job(f"partly{index}", source, MASKING.name) for index in range(5)]
    most, done = [0], threading.Event()

    def zombies() -> set[int]:  # in the runner zygotes' sessions (other tests leave zombies too)
        zygotes = set(ZYGOTES.values())
        return forking.spares(zygotes, ended=True) - forking.spares(zygotes)

    before = zombies()

    def count():
        while not done.wait(0.05):
            most[0] = max(most[0], len(zombies() - before))

    watcher = threading.Thread(target=count)
    watcher.start()
    try:
        grade_all(jobs, tmp_path / "out", GradingOptions(public_only=True), workers=1, progress=False)
    finally:
        done.set()
        watcher.join()
    assert most[0] <= 3, f"{most[0]} zombies at once: at most what the last runner left, and a runner's own exit"


def test_a_forked_runner_that_raises_leaves_its_traceback_in_runner_log(tmp_path, monkeypatch):
    """A forked child ends in ``os._exit`` whatever happens: what it raised reaches its log, as a started runner's
    does (the feedback of a runner that died sends staff to runner.log)."""
    monkeypatch.setenv("AUTOGRADER_COLD", "0")
    runners = Runners(Isolation.detect())
    with runners.stop_on_signals(), open(tmp_path / "runner.log", "wb") as log:
        process = runners.start({"assignment": "no-such-assignment", "submission": str(tmp_path), "name": "x"}, log)
        assert isinstance(process, forking.Forked)
        process.wait(timeout=60)
        runners.finish(process)
    written = (tmp_path / "runner.log").read_text()
    assert process.returncode != 0 and "Traceback (most recent call last)" in written
    assert "no-such-assignment" in written.splitlines()[-1], written
