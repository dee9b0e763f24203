"""What a worker on a GPU machine needs for CUDA, which a CPU machine can check: both seen missing on an H100, where
every worker's first CUDA call failed (error 304, `cudaGetDeviceCount`) and correct submissions lost their runtime
tests' points. ``autograder.worker.gpu.Grants`` stands for NVIDIA's device files here.

- The memory limit: on a GPU machine the writable memory alone, since CUDA reserves address space far beyond any
  memory limit when it starts (tests/sandbox/test_memory_limit.py).
- Landlock's allow-list lets the worker write under /proc on a GPU machine: CUDA names its threads there.

Each case confines a fresh interpreter (neither can be undone), then tries what CUDA does."""

from __future__ import annotations

import errno
import json
import subprocess
import sys

import pytest

from autograder.sandbox.isolation import _kernel_landlock

GPU = ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]

# The allow-list enforced on this process, then another thread named as CUDA names its own: glibc's
# pthread_setname_np of a thread other than the caller writes /proc/PID/task/TID/comm (0, or the error number).
THREAD_NAME = """
import ctypes, json, os, tempfile, threading
from autograder.worker import confine, gpu
folder = tempfile.mkdtemp()
confine._prctl(confine.PR_SET_NO_NEW_PRIVS, 1)
confine._enforce(confine._allow_list({{"cwd": folder, "tmp": folder}}, -1, gpu.Grants(tuple({devices!r}))), -1)
started, done = threading.Event(), threading.Event()
thread = threading.Thread(target=lambda: (started.set(), done.wait()))
thread.start()
started.wait()
error = ctypes.CDLL(None).pthread_setname_np(ctypes.c_ulong(thread.ident), b"cuda-EvtHandlr")
named = open(f"/proc/{{os.getpid()}}/task/{{thread.native_id}}/comm").read().strip() == "cuda-EvtHandlr"
done.set()
print(json.dumps({{"error": error, "named": named}}))
"""


def _run(code: str, devices: list[str]) -> dict:
    run = subprocess.run([sys.executable, "-c", code.format(devices=devices)], capture_output=True, text=True,
                         check=True, timeout=60)
    return json.loads(run.stdout)


@pytest.mark.skipif(not _kernel_landlock(), reason="this kernel has no Landlock")
@pytest.mark.parametrize(("devices", "answer"), [(GPU, {"error": 0, "named": True}),
                                               ([], {"error": errno.EACCES, "named": False})], ids=["gpu", "cpu"])
def test_cuda_may_name_its_threads_under_landlock_on_a_gpu_machine_only(devices, answer):
    assert _run(THREAD_NAME, devices) == answer


def test_runtime_tests_run_on_the_cpu_where_the_workers_cannot_reach_the_gpu(monkeypatch, tmp_path):
    """A grader that sees a GPU its workers cannot use (this CPU build of torch, told in the grading process that it
    has one; the workers start as new interpreters, so they are not told) grades the reference's runtime test on the
    CPU: full marks, and the results' device says why. Before, such a test moved the model to CUDA and failed."""
    import torch

    from autograder import course
    from autograder.grading import runner
    from autograder.grading.plugin import OUT_OF_REACH
    from autograder.grading_options import GradingOptions

    monkeypatch.setenv("AUTOGRADER_COLD", "1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "a GPU out of reach")
    masking = course.load("masking")
    results = runner.grade_one(masking, masking.solution_dir, tmp_path / "out", name="reference",
                               options=GradingOptions(hidden_only=True))
    runtime = [test for test in results.tests if "runtime" in test.tags]
    assert runtime and all(test.score == test.max_score for test in runtime), [t.output for t in runtime]
    assert all(" on cpu," in test.output for test in runtime)
    assert results.extra_data["device"] == "cuda (a GPU out of reach)" + OUT_OF_REACH
