"""The worker's memory limit bounds what the submission uses, not what torch's build maps (issue 34).

Importing the CUDA build of torch (what ``pip install torch`` gives on Linux, GPU or not) maps 3.2 GB of address space,
and a worker bounded to ``memory_mb`` of address space in all (2048 for masking) scored a correct masking.py 0/37 on a
student's laptop. Here a process reserves 6 GiB of address space without access (PROT_NONE, untouched: as CUDA's build
does at import) and then runs ``autograder check``: its workers' zygote, forked from it, and every worker carry the
reservation, as they carry torch's imports, before any student file loads. No hook in the grader: the reservation is
the test process's own, so nothing a submission or a student sets can make one. With the limit reverted to an
absolute ``RLIMIT_AS`` of ``memory_mb`` the reference lost points (34.25/37 on 2026-11-27: numpy's lazy imports and
larger tensors failed).

The limits themselves (``confine.bound_memory``) are checked in a fresh interpreter beside the same kind of
reservation: a hog is still refused, on a CPU machine (private and shared memory) and on a GPU machine (private
memory, with CUDA's later reservations let through).
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys

import pytest
from support.submissions import MASKING, REPO

RESERVED = """
import mmap, sys
reserved = mmap.mmap(-1, 6 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)
from autograder.cli import main
sys.exit(main(sys.argv[1:]))
"""

# 8 GiB reserved before the limits (as CUDA's build at import), memory_mb of 1 GiB; then what still works and what not.
LIMITS = """
import json, mmap, resource
from autograder.worker import confine
confine.gpu_devices = lambda: {devices!r}
reserved = mmap.mmap(-1, 8 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)
before = confine._held()
confine._set_limits({{"memory_mb": 1024, "cpu_seconds": 60, "file_size_mb": 64, "open_files": 256,
                     "processes": 4096}})
answers = {{"set": confine.bound_memory({{"linux": True, "limits": {{"memory_mb": 1024}}}}), "before": before,
           "as": resource.getrlimit(resource.RLIMIT_AS)[0]}}


def tried(make):
    try:
        make()
    except (MemoryError, OSError):
        return False
    return True


answers["written"] = tried(lambda: bytearray(512 << 20))
answers["too_much"] = tried(lambda: bytearray(1536 << 20))
answers["shared"] = tried(lambda: mmap.mmap(-1, 1536 << 20, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS))
answers["reserved_later"] = tried(lambda: mmap.mmap(-1, 8 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0))
print(json.dumps(answers))
"""
GPU = ["/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"]


def _limits(devices: list[str]) -> dict:
    run = subprocess.run([sys.executable, "-c", LIMITS.format(devices=devices)], capture_output=True, text=True,
                         check=True, timeout=60)
    return json.loads(run.stdout)


def test_a_cpu_machine_bounds_private_and_shared_memory_over_what_the_worker_holds():
    answers = _limits([])
    mb = 1 << 30
    assert answers["set"] == {"RLIMIT_DATA": answers["before"]["VmData"] + mb,
                              "RLIMIT_AS": answers["before"]["VmSize"] + mb}, answers
    assert answers["before"]["VmSize"] > 8 << 30, "the reservation before the limits counts in the address space"
    assert answers["written"], "512 MB of a 1 GB share must be there, whatever the process reserved before"
    assert not answers["too_much"] and not answers["shared"] and not answers["reserved_later"], answers


def test_a_gpu_machine_bounds_written_memory_and_leaves_cuda_its_reservations():
    answers = _limits(GPU)
    assert answers["set"] == {"RLIMIT_DATA": answers["before"]["VmData"] + (1 << 30)}, answers
    assert answers["as"] == resource.RLIM_INFINITY, "the address space is not bounded on a GPU machine"
    assert answers["written"] and answers["reserved_later"], "CUDA reserves address space as it makes its contexts"
    assert not answers["too_much"], "memory written beyond memory_mb must still fail"


@pytest.mark.slow
def test_check_gives_a_correct_submission_full_marks_beside_a_large_reservation(tmp_path):
    folder = tmp_path / "masking"
    folder.mkdir()
    (folder / "masking.py").write_text((MASKING.solution_dir / "masking.py").read_text())
    run = subprocess.run([sys.executable, "-c", RESERVED, "check", "masking", str(folder)], capture_output=True,
                         text=True, timeout=300, cwd=REPO, env={**os.environ, "COLUMNS": "200"})
    score = re.search(r"Score: ([\d.]+) / ([\d.]+)", run.stdout)
    assert score and score.group(1) == score.group(2), run.stdout[-3000:] + run.stderr[-2000:]
    assert run.returncode == 0
