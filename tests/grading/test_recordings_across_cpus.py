"""Recorded expectations hold on any x86-64 CPU (issue: `make test` failed on a CPU with other kernels).

The committed recordings (``public/expected.zip``) were made on one CPU; students replay them with
``autograder check`` on theirs. Here each assignment's public expectations are recorded again under another
kernel level (``ATEN_CPU_CAPABILITY=default`` and MKL limited to SSE4.2: the vector code of the oldest x86-64 CPUs
torch supports) and another thread count, then: ``build --check``'s comparison accepts them, every known mistake
that one recording tells apart from the reference the other does too, and the bundled examples, replayed from the
committed recordings under that kernel level, keep exactly the public scores they get natively.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from support.submissions import REPO

from autograder import course
from autograder.authoring.build import _same, same_store
from autograder.batch.discovery import Job
from autograder.batch.engine import grade_all
from autograder.grading.oracle import read_store
from autograder.grading_options import GradingOptions

pytestmark = pytest.mark.slow

OTHER_CPU = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}
# The reference's values are computed in the grading process: record them with two threads more than the assignment's.
RECORD = ("import sys, torch; import autograder.grading.runner as runner; "
          "runner.set_threads = lambda n: torch.set_num_threads(n + 2); sys.exit(runner.main([]))")
NAMES = course.names()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    """Each assignment's public expectations recorded under OTHER_CPU: {name: path of the recording}."""
    base = tmp_path_factory.mktemp("portability")
    stores = {name: base / f"{name}.zip" for name in NAMES}

    def record(name: str) -> None:
        job = {"assignment": name, "submission": str(course.load(name).solution_dir), "out": str(base / name),
               "name": "reference", "record_to": str(stores[name]),
               "options": GradingOptions(public_only=True, oracle="record").to_json()}
        # Two recordings at a time, so their threads wait without spinning (as side-by-side gradings do).
        subprocess.run([sys.executable, "-c", RECORD], input=json.dumps(job).encode(),
                       env={**os.environ, **OTHER_CPU, "OMP_WAIT_POLICY": "PASSIVE"}, check=True, capture_output=True)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(record, NAMES))
    return stores


@pytest.mark.parametrize("name", NAMES)
def test_recordings_on_another_cpu_are_the_same(recorded, name):
    assert same_store(course.load(name).expected_file, recorded[name])


@pytest.mark.parametrize("name", NAMES)
def test_known_mistakes_are_told_apart_on_either_cpu(recorded, name):
    """A mutant caught by a public check on one CPU is caught on the other: the recordings agree on which recorded
    mistakes differ from the reference."""
    here, there = read_store(course.load(name).expected_file), read_store(recorded[name])
    disagree = []
    for key, (value, variants) in here.items():
        other_value, other_variants = there[key]
        for (mistake, wrong), (_, other_wrong) in zip(variants, other_variants, strict=True):
            if _same(wrong, value) != _same(other_wrong, other_value):
                disagree.append(f"{key}: {mistake[:60]}")
    assert not disagree, disagree


def _scores(out) -> dict:
    jobs = [Job(f"{path.parent.name}-{path.name}", path, path.parent.name)
            for path in sorted((REPO / "examples").glob("*/*"))
            if path.name in ("reference", "partly_wrong", "correct")]
    collected = grade_all(jobs, out, GradingOptions(public_only=True, oracle="replay"), workers=2, progress=False)
    return {r.submission: {t.number: t.score for t in r.tests} | {"max": r.max_score} for r in collected}


def test_examples_replayed_on_another_cpu_keep_their_scores(tmp_path, monkeypatch):
    native = _scores(tmp_path / "native")
    for name, value in OTHER_CPU.items():
        monkeypatch.setenv(name, value)
    other = _scores(tmp_path / "other")
    assert other == native
    for name, scores in other.items():
        total = sum(v for k, v in scores.items() if k != "max")
        if not name.endswith("partly_wrong"):
            assert total == scores["max"] > 0, name
        else:
            assert total < scores["max"], name
