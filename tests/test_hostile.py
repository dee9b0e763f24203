"""Hostile and broken submissions: each one still gets a results file, a clear message and no forged score.

All cases are graded once, in one batch (two at a time, as an instructor would), by the module
fixture; each test then reads what the grader wrote. Most cases are the reference with one
function replaced, so every other test must still pass: misbehaviour costs only its own points.
"""

from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path

import psutil
import pytest
from conftest import REPO, find_test, grade, needs_root, reference_with, results_file

MARKER = Path("/tmp") / f"autograder-hostile-{os.getpid()}"

CASES = {
    # causal_mask(T) misbehaves differently for each T the public test uses.
    "call_hazards": """
import sys, os
_causal_mask = causal_mask
def causal_mask(T, device=None):
    if T == 1:
        return [[True]]
    if T == 2:
        sys.exit(0)
    if T == 5:
        os._exit(0)
    if T == 8:
        while True:
            pass
    return _causal_mask(T, device)
""",
    # padding_mask blows up memory, forks until refused, or floods the output, depending on T.
    "resource_hazards": """
import os, time
_padding_mask = padding_mask
def padding_mask(lengths, T):
    if T == 6:
        hoard = []
        while True:
            hoard.append(torch.ones(50_000_000))
    if T == 5:
        for _ in range(3000):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                time.sleep(120)
                os._exit(0)
    if T == 2:
        for _ in range(400_000):
            print("flood " * 40)
    return _padding_mask(lengths, T)
""",
    "bad_returns": """
class Agreeable(torch.Tensor):
    def __eq__(self, other):
        return True
    def allclose(self, *args, **kwargs):
        return True

def causal_mask(T, device=None):
    return torch.ones(T, T).tril()
def padding_mask(lengths, T):
    return (torch.arange(T)[None, :] < lengths[:, None]).T
def masked_softmax(scores, mask=None):
    return torch.full_like(scores, float("nan"))
def split_heads(x, n_head):
    return x.tolist()
def merge_heads(x):
    return torch.zeros(x.shape[0], x.shape[2], x.shape[1] * x.shape[3]).as_subclass(Agreeable)
""",
    "patches_libraries": """
import numpy
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda *a, **k: torch.tensor(True)
def masked_softmax(scores, mask=None):
    return torch.ones_like(scores) / scores.shape[-1]
""",
    "exit_at_import": "import sys\nsys.exit(0)\n",
    "os_exit_at_import": "import os\nos._exit(3)\n",
    "missing_and_wrong_signature": """
del causal_mask
def padding_mask(lengths, T, pad_id):
    raise AssertionError("never reached")
""",
    "forges_results": """
import json, os
FAKE = {"score": 1000, "tests": [{"name": "forged", "score": 1000, "max_score": 1}]}
def _forge():
    targets = ["results.json", "../results.json", "../../results.json"]
    try:
        argv = open(f"/proc/{os.getppid()}/cmdline").read().split("\\0")
        out = argv[argv.index("--out") + 1]
        targets += [os.path.join(out, "results.json"), os.path.join(out, "feedback.md")]
    except Exception:
        pass
    for target in targets:
        try:
            with open(target, "w") as handle:
                json.dump(FAKE, handle)
        except OSError:
            pass
_forge()
_lecture = lecture_causal_candidate
def lecture_causal_candidate():
    _forge()
    return _lecture()
""",
    "detached_process": f"""
import os, time
_lecture = lecture_causal_candidate
def lecture_causal_candidate():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for _ in range(600):
                try:
                    with open({str(MARKER)!r}, "w") as handle:
                        handle.write(str(time.time()))
                except OSError:
                    pass
                time.sleep(0.1)
        os._exit(0)
    return _lecture()
""",
    "reads_secrets": f"""
import os
SECRETS = {[str(REPO / "solutions" / "masking" / "masking.py"),
            str(REPO / "autograder" / "suites" / "masking" / "hidden" / "test_hidden.py"),
            str(REPO / "autograder" / "suites" / "masking" / "hidden" / "SECRET"),
            str(REPO / "tests" / "mutants" / "masking" / "no_scaling.py")]!r}
def causal_mask(T, device=None):
    report = []
    for path in SECRETS:
        try:
            report.append(f"READ {{len(open(path).read())}} bytes of {{path}}")
        except OSError as exc:
            report.append(f"refused {{type(exc).__name__}} {{path}}")
    raise RuntimeError(" | ".join(report))
""",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every hostile case graded in one batch; returns (results by name, out folder, seconds)."""
    base = tmp_path_factory.mktemp("hostile")
    submissions = base / "submissions"
    paths = [reference_with(submissions, name, code) for name, code in CASES.items()]
    paths.append(reference_with(submissions, "syntax_error", replace="def causal_mask(T:\n    return\n"))
    (submissions / "empty").mkdir()
    paths.append(submissions / "empty")
    paths += _zips(submissions)
    MARKER.unlink(missing_ok=True)
    started = time.monotonic()
    results = grade(paths, base / "out")
    return results, base / "out", time.monotonic() - started


def _zips(folder: Path) -> list[Path]:
    traversal = folder / "traversal.zip"
    with zipfile.ZipFile(traversal, "w") as archive:
        archive.writestr("masking.py", "import torch\n")
        archive.writestr("../../escaped.py", "print('escaped')\n")
    corrupted = folder / "corrupted.zip"
    corrupted.write_bytes(b"PK\x03\x04" + os.urandom(300))
    nested = folder / "nested.zip"
    with zipfile.ZipFile(nested, "w") as archive:
        archive.writestr("my folder/masking.py", (REPO / "solutions" / "masking" / "masking.py").read_text())
        archive.writestr("__MACOSX/my folder/._masking.py", "junk")
    return [traversal, corrupted, nested]


def test_every_submission_gets_a_results_file(graded):
    results, out, _ = graded
    expected = {*CASES, "syntax_error", "empty", "traversal", "corrupted", "nested"}
    assert set(results) == expected
    for name in expected:
        data = results_file(out, name)
        assert data["tests"] or data["output"], name
        assert data["score"] <= data["extra_data"]["max_score"], name


def test_call_hazards_cost_only_their_own_parts(graded):
    results = graded[0]["call_hazards"]
    test = find_test(results, "causal_mask: the lower-triangular")
    assert test.score == 0
    assert "expected a torch.Tensor, but your code returned a list" in test.output
    assert "sys.exit(0)" in test.output
    assert "exited with status 0" in test.output
    assert "did not finish within the test's time limit of 15 s" in test.output
    others = [t for t in results.tests if t is not test and "causal" not in t.name.lower()]
    assert all(t.status == "passed" for t in others if "combined_mask" not in t.name), \
        [t.name for t in others if t.status != "passed"]


def test_resource_hazards_are_contained(graded):
    results = graded[0]["resource_hazards"]
    test = find_test(results, "padding_mask: True exactly")
    assert 0 < test.score < test.max_score  # the fork and flood parts still answer correctly
    assert "memory" in test.output.lower()
    assert "output truncated" not in test.output or len(test.output) < 20_000
    assert len(json.dumps(results.to_gradescope())) < 200_000, "the output flood reached the results file"
    assert not [p for p in psutil.process_iter(["cmdline"]) if "autograder.worker" in " ".join(p.info["cmdline"] or [])]


def test_bad_return_values_are_named(graded):
    results = graded[0]["bad_returns"]
    causal = find_test(results, "causal_mask: the lower").output
    assert "dtype torch.float32, expected torch.bool (a mask is a boolean tensor" in causal
    assert "shape (5, 4), expected (4, 5)" in find_test(results, "padding_mask: True").output
    assert "NaN" in find_test(results, "a row whose keys are all masked").output
    heads = find_test(results, "split_heads and merge_heads")
    assert "returned a list" in heads.output and "tensor subclass" in heads.output
    rows = find_test(results, "rows sum to one")
    assert rows.score == 0 and "sums to nan" in rows.output and "where False" not in rows.output
    assert [t.name for t in results.tests if t.score > 0] == [
        "lecture_causal_candidate: picks the causal mask among the lecture's three"]  # right, given its mask


def test_patched_libraries_change_nothing_in_the_grader(graded):
    results = graded[0]["patches_libraries"]
    assert find_test(results, "masked_softmax: matches the reference").score == 0
    assert find_test(results, "masked_softmax: rows sum to one").score < 2


def test_exits_at_import_are_reported(graded):
    results = graded[0]
    assert "sys.exit(0)" in results["exit_at_import"].output
    assert "exited with status 3" in results["os_exit_at_import"].output
    assert results["exit_at_import"].score == results["os_exit_at_import"].score == 0


def test_missing_function_and_wrong_signature(graded):
    results = graded[0]["missing_and_wrong_signature"]
    assert "has no attribute 'causal_mask'" in find_test(results, "causal_mask: the lower").output
    assert "pad_id" in find_test(results, "padding_mask: True").output
    assert find_test(results, "masked_softmax: matches").status == "passed"


def test_forged_results_are_overwritten(graded):
    results, out, _ = graded
    data = results_file(out, "forges_results")
    assert data["score"] == data["extra_data"]["max_score"] > 0  # otherwise the reference: full marks
    assert "forged" not in json.dumps(data) and "1000" not in (out / "forges_results" / "feedback.md").read_text()


def test_detached_processes_do_not_outlive_grading(graded):
    time.sleep(1.0)
    if MARKER.exists():
        last = MARKER.stat().st_mtime
        time.sleep(1.0)
        assert MARKER.stat().st_mtime == last, "a detached student process is still writing after grading ended"
    assert graded[0]["detached_process"].score == graded[0]["detached_process"].max_score


@needs_root
def test_secrets_are_unreadable_when_grading_as_root(graded):
    output = find_test(graded[0]["reads_secrets"], "causal_mask: the lower").output
    assert "READ" not in output, output
    assert output.count("refused") == 4


def test_syntax_error_and_empty_folder(graded):
    results = graded[0]
    assert "SyntaxError" in results["syntax_error"].output and "line 1" in results["syntax_error"].output
    assert "empty" in results["empty"].output


def test_unsafe_and_corrupted_zips(graded):
    results = graded[0]
    assert "unsafe entry" in results["traversal"].output
    assert not (graded[1].parent / "escaped.py").exists()
    assert "not a readable zip" in results["corrupted"].output
    nested = results["nested"]
    assert nested.score == nested.max_score > 0


def test_batch_time_is_bounded(graded):
    """The hostile batch must not hang: every hazard is cut off by a time or resource limit."""
    assert graded[2] < 240
