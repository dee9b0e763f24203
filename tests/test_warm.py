"""Warm starts (``autograder.forking``): a forked worker computes what a started one does, a zygote refuses to fork
where a thread pool or a CUDA context would be copied, and the cold path stays available to compare."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import MASKING, reference_with

from autograder import batch

# Run in a fresh interpreter: warm_up needs a process that runs one thread, which pytest's is not always.
SAME_RESULTS = textwrap.dedent("""
    import json, os, sys, tempfile
    from pathlib import Path
    from autograder import sandbox
    from autograder.proxy import Student
    from autograder.sandbox import Isolation, Limits

    folder = Path(tempfile.mkdtemp(prefix="autograder-warm-")) / "submission"  # staged as a runner stages
    folder.mkdir()
    (folder / "heavy.py").write_text(
        "import torch\\n"
        "def run():\\n"
        "    g = torch.Generator().manual_seed(0)\\n"
        "    a = torch.randn(512, 512, generator=g, dtype=torch.float64)\\n"
        "    return (a @ a.T).sum(dim=0)[:8].tolist(), torch.get_num_threads()\\n")
    answers = {}
    for mode in ("warm", "cold"):
        if mode == "warm":
            assert sandbox.warm_up() is not None, "this process should be able to fork a zygote"
        else:
            sandbox.close_zygote()  # workers start cold from here on
        student = Student(folder, [{"name": "heavy"}], Limits(threads=2), Isolation.detect())
        answers[mode] = student.heavy.run()
        answers[mode + " forked"] = type(student._sandbox.process).__name__ == "Forked"
        student.close()
    print(json.dumps(answers))
""")


def test_a_forked_worker_computes_what_a_started_one_does():
    answers = json.loads(subprocess.run([sys.executable, "-c", SAME_RESULTS], capture_output=True, text=True,
                                        check=True).stdout)
    assert answers["warm forked"] and not answers["cold forked"]
    assert answers["warm"] == answers["cold"] and answers["warm"][1] == 2


@pytest.mark.parametrize("setup", [
    "import threading, time; threading.Thread(target=time.sleep, args=(5,), daemon=True).start()",
    "import torch; torch.cuda.is_initialized = lambda: True",
])
def test_a_zygote_refuses_to_fork_a_thread_pool_or_a_cuda_context(setup):
    code = (f"{setup}\nfrom autograder import forking, sandbox\n"
            "try:\n    forking.fork_ready()\nexcept forking.ForkRefused as exc:\n    print('refused:', exc)\n"
            "print('zygote:', sandbox.warm_up())")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "refused:" in output and "zygote: None" in output  # the worker then starts cold


def test_warm_and_cold_batches_grade_alike(tmp_path, monkeypatch):
    source = reference_with(tmp_path, "partly", "def masked_softmax(scores, mask=None):\n    return scores\n")
    scores = {}
    for cold in ("0", "1"):
        monkeypatch.setenv("AUTOGRADER_COLD", cold)
        job = batch.Job("partly", source, MASKING.name)
        [results] = batch.grade_all([job], tmp_path / f"out-{cold}", progress=False, public_only=True)
        scores[cold] = {t.number: t.score for t in results.tests}
    assert scores["0"] == scores["1"] and 0 < sum(scores["0"].values()) < sum(
        t.max_score for t in results.tests)
