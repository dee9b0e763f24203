"""The Gradescope autograder zip: its contents follow Gradescope's specification, and its run_autograder,
run in a fake /autograder tree, grades correct and broken submissions, keeps the source unreadable to
student code, records the submission metadata, and always leaves a results.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import landlockpy
import pytest
from support.machine import is_root
from support.submissions import REPO

from autograder import cli, container, course, gradescope, gradescope_metadata
from autograder.authoring import dist, simulation
from autograder.results import Results, TestResult

pytestmark = pytest.mark.slow

ASSIGNMENTS = course.names()
METADATA = {
    "id": 4242, "created_at": "2030-03-01T10:00:00.000000-08:00",
    "assignment": {"due_date": "2030-03-08T23:59:00.000000-08:00", "late_due_date": None, "title": "x",
                   "total_points": "60.0"},
    "users": [{"email": "student@example.com", "id": 7, "name": "A Student"}],
    "previous_submissions": [{"submission_time": "2030-02-28T10:00:00-08:00", "score": 12.0, "results": {}},
                             {"submission_time": "2030-02-29T10:00:00-08:00", "score": 30.5, "results": {}}],
}


class Zips(dict):
    """``gradescope_zips[name]``: the Gradescope zip of one assignment, built on first use (so one assignment
    that cannot be built fails its own tests only)."""

    def __init__(self, out: Path):
        super().__init__()
        self.out = out

    def __missing__(self, name: str) -> Path:
        self[name] = dist.build_gradescope([name], self.out)[0]
        return self[name]


@pytest.fixture(scope="module")
def gradescope_zips(tmp_path_factory) -> Zips:
    return Zips(tmp_path_factory.mktemp("gradescope"))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_zip_follows_the_specification(name, gradescope_zips, tmp_path):
    assignment = course.load(name)
    with zipfile.ZipFile(gradescope_zips[name]) as archive:
        listing = {info.filename: info for info in archive.infolist()}
        for script in ("setup.sh", "run_autograder"):
            assert (listing[script].external_attr >> 16) & 0o111, f"{script} must be executable"
            (tmp_path / script).write_bytes(archive.read(script))
            check = subprocess.run(["bash", "-n", str(tmp_path / script)], capture_output=True, text=True)
            assert check.returncode == 0, f"{script} is not valid bash: {check.stderr}"
        readme = archive.read("README.md").decode()
        setup = archive.read("setup.sh").decode()
    assert {"README.md", "requirements.txt", "pyproject.toml", f"autograder/suites/{name}/assignment.toml",
            *(f"solutions/{name}/{f}" for f in assignment.files)} <= set(listing)
    hidden = {f"autograder/suites/{name}/hidden/{p.relative_to(assignment.hidden_dir).as_posix()}"
              for p in assignment.hidden_dir.rglob("*.py") if "__pycache__" not in p.parts}
    assert hidden <= set(listing), "the hidden tests travel in the autograder zip"
    mutants = {f"tests/mutants/{name}/{p.name}" for p in assignment.mutants_dir.glob("*.py")}
    assert mutants <= set(listing)
    assert not [f for f in listing if f.startswith(("examples/", "assignments/", ".venv/"))]
    stated = container.settings(name)
    memory = container.size_label(stated.memory_mb)
    assert (f"Set the assignment's Autograder Settings to {stated.cpus:g} CPU, {memory} memory and a "
            f"timeout of {stated.timeout_min} minutes.") in " ".join(readme.split())
    assert f'BUDGET="${{AUTOGRADER_BUDGET:-{stated.budget}}}"' in (tmp_path / "run_autograder").read_text()
    assert not dist.PLACEHOLDER.search(setup + readme), "every placeholder is filled"


def test_setup_pins_what_pyproject_pins(gradescope_zips):
    pinned = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    torch = [d for d in pinned if d.startswith("torch")]
    assert torch == ["torch==2.13.0"]
    with zipfile.ZipFile(gradescope_zips["masking"]) as archive:
        setup = archive.read("setup.sh").decode()
        requirements = archive.read("requirements.txt").decode().splitlines()
    assert [line for line in requirements if not line.startswith("#")] == pinned
    assert f'--index-url https://download.pytorch.org/whl/cpu "{torch[0]}"' in setup, "CPU torch, no CUDA wheels"
    assert '"$PYTHON_BIN" -m venv' in setup and "useradd" in setup and "requirements.txt" in setup
    assert setup.index("whl/cpu") < setup.index('-r "$SOURCE/requirements.txt"'), "torch from the CPU index first"


def test_the_instructors_guide_shows_the_measured_settings():
    """docs/instructors.md's table is autograder/gradescope_settings.toml's (what the zips say, and what
    run_autograder's budget follows), and every assignment has a measured row (bench/gradescope_sizes.py)."""
    assert container.table(ASSIGNMENTS) in (REPO / "docs" / "instructors.md").read_text()
    assert all(container.settings(name).seconds is not None for name in ASSIGNMENTS)


def test_the_terms_secret_replaces_the_committed_one(tmp_path):
    assert cli.main(["dist", "gradescope", "masking", "--secret", "spring-2031", "--out", str(tmp_path)]) == 0
    with zipfile.ZipFile(tmp_path / "gradescope-masking.zip") as archive:
        assert archive.read("autograder/suites/masking/hidden/SECRET") == b"spring-2031\n"


def fake_tree(parent: Path, zip_path: Path, files: dict[str, str], metadata: dict | None = METADATA) -> Path:
    """A fresh /autograder look-alike: source/ (the unzipped autograder), submission/, run_autograder."""
    return simulation.unpack(parent, zip_path, files, metadata)


def run_autograder(root: Path, python: str = sys.executable, **env) -> tuple[dict, float, str]:
    started = time.monotonic()
    process = subprocess.run([str(root / "run_autograder")], cwd=root, capture_output=True, text=True, timeout=900,
                             env={**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": python, **env})
    assert process.returncode == 0, process.stdout + process.stderr
    return json.loads((root / "results" / "results.json").read_text()), time.monotonic() - started, process.stdout


def reference_files(name: str) -> dict[str, str]:
    assignment = course.load(name)
    return {file: (assignment.solution_dir / file).read_text() for file in assignment.files}


PROBE = '''

def _probe_the_sandbox():
    """Raise at import when the grading tree can be read (or the results written) from student code."""
    import os
    root = {root!r}
    readable = []
    for path in ["source", "source/solutions", "source/autograder/suites/masking/hidden/SECRET",
                 "source/solutions/masking/masking.py", "submission_metadata.json", "results",
                 "results/results.json"]:
        full = os.path.join(root, path)
        try:
            os.listdir(full) if os.path.isdir(full) else open(full).read()
            readable.append(path)
        except OSError:
            pass
    try:
        with open(os.path.join(root, "results", "results.json"), "w") as forged:
            forged.write('{{"score": 1000}}')
        readable.append("results.json is writable")
    except OSError:
        pass
    if readable or not os.listdir("."):
        raise RuntimeError(f"student code could read {{readable}}")


_probe_the_sandbox()
'''


def test_a_correct_submission_gets_full_marks_and_the_tree_stays_unreadable(gradescope_zips, tmp_path):
    """The reference, plus code that fails to import if it can read the source, the metadata or the results, and a
    forged metadata file of its own (ignored: the attempt and id are Gradescope's)."""
    files = reference_files("masking")
    root = fake_tree(tmp_path, gradescope_zips["masking"], {})
    files["masking.py"] += PROBE.format(root=str(root)) if is_root else ""
    files["submission_metadata.json"] = json.dumps({**METADATA, "id": 1, "users": [{"name": "Mallory Forger"}]})
    for name, text in files.items():
        (root / "submission" / name).write_text(text)
    data, seconds, stdout = run_autograder(root)
    results = Results.from_gradescope(data)
    assert results.score == results.max_score > 0, results.output
    assert data["score"] == results.max_score and data["stdout_visibility"] == "hidden"
    assert results.extra_data["status"] == "graded"
    extra = results.extra_data
    assert extra["attempt"] == 3 and extra["submitted_at"] == "2030-03-01T10:00:00-08:00"
    assert extra["late"] is False and extra["previous_best_score"] == 30.5 and extra["gradescope_submission_id"] == 4242
    assert "student@example.com" not in json.dumps(data) and "A Student" not in json.dumps(data)
    assert "Ignored: submission_metadata.json in your submission" in results.output  # Gradescope's own file decides
    visible = [t for t in results.tests if t.visibility == "visible"]
    withheld = [t for t in results.tests if t.visibility == "after_due_date"]
    assert withheld, "masking has hidden tests"
    assert results.output.startswith(f"Attempt 3. Tests shown now: {sum(t.max_score for t in visible):g} / "
                                     f"{sum(t.max_score for t in visible):g} points")
    assert f"{len(withheld)} more test(s) worth {sum(t.max_score for t in withheld):g} points" in results.output
    assert "Score:" in stdout, "the readable report goes to stdout, which only instructors see"
    if is_root:
        assert results.extra_data["isolation"].startswith(("isolated", "own uid"))
        assert (root / "source").stat().st_mode & 0o077 == 0
    print(f"\nfake /autograder, masking reference: {seconds:.1f} s wall, execution_time {data['execution_time']} s")


def _grade_broken(name: str, zip_path: Path, parent: Path) -> dict:
    """A syntax error in the first own file (a .py file, or a notebook that is not JSON), graded by run_autograder."""
    broken = course.load(name).own_files[0]
    files = reference_files(name)
    files[broken] = "def broken(:\n" if broken.endswith(".py") else "{ this is not a notebook"
    return run_autograder(fake_tree(parent, zip_path, files, metadata=None))[0]


@pytest.fixture(scope="module")
def broken_runs(gradescope_zips, tmp_path_factory) -> dict:
    """Every assignment's broken submission graded in its fake tree, two at a time (CI has two cores)."""
    zips = {name: gradescope_zips[name] for name in ASSIGNMENTS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda name: _grade_broken(name, zips[name], tmp_path_factory.mktemp(name)), ASSIGNMENTS)
        return dict(zip(ASSIGNMENTS, runs, strict=True))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_a_broken_submission_still_gets_a_full_results_file(name, broken_runs):
    results = Results.from_gradescope(broken_runs[name])
    assert results.score == 0 and results.max_score > 0 and results.tests, results.output
    assert "could not be loaded" in results.output and course.load(name).own_files[0] in results.output
    assert all(t.status == "failed" for t in results.tests if t.max_score > 0)


def test_results_are_written_even_when_python_cannot_run(gradescope_zips, tmp_path):
    root = fake_tree(tmp_path, gradescope_zips["masking"], reference_files("masking"))
    data, _, stdout = run_autograder(root, python="/bin/false")
    assert data["score"] == 0 and "autograder failed" in data["output"] and data["tests"][0]["max_score"] == 0
    assert "last-resort" in stdout


def test_results_are_written_when_the_grader_itself_fails(tmp_path):
    (tmp_path / "submission").mkdir()
    results = gradescope.run(tmp_path, "no-such-assignment")
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results.score == data["score"] == 0 and "autograder failed" in data["output"]
    assert "unknown assignment" in data["extra_data"]["status"]


def _results(tests: list[tuple[str, float, float]]) -> Results:
    return Results("masking", "s", tests=[
        TestResult(name=f"t{i}", number=str(i), score=score, max_score=points, status="passed" if score == points
                   else "failed", visibility=visibility) for i, (visibility, score, points) in enumerate(tests)])


def test_metadata_decides_what_the_summary_may_say(tmp_path):
    path = tmp_path / "submission_metadata.json"
    path.write_text(json.dumps(METADATA))
    on_time = gradescope_metadata.Metadata.read(path)
    results = _results([("visible", 2, 2), ("visible", 0, 1), ("after_due_date", 0, 5), ("after_published", 3, 3),
                        ("hidden", 0, 0), ("visible", 0, 0)])
    summary = gradescope_metadata.student_summary(results, on_time)
    assert summary.startswith("Attempt 3. Tests shown now: 2 / 3 points (1 of 2 passed).")  # the 0-point test too
    results.tests[1].score = 7 / 12  # partial credit, rounded as the score Gradescope shows beside it
    assert gradescope_metadata.student_summary(results, on_time).startswith(
        "Attempt 3. Tests shown now: 2.58 / 3 points")
    results.tests[1].score = 0
    assert "1 more test(s) worth 5 points were run; their results are shown after the due date (2030-03-08" in summary
    assert "1 more test(s) worth 3 points were run; their results are shown when grades are published." in summary
    late = dict(METADATA, created_at="2030-03-09T10:00:00-08:00")
    path.write_text(json.dumps(late))
    after = gradescope_metadata.Metadata.read(path)
    assert after.past_due and after.extra_data()["late_by_minutes"] == 601.0
    summary = gradescope_metadata.student_summary(results, after)
    assert "Tests shown now: 2 / 8 points (1 of 3 passed)" in summary and "after the due date (" not in summary
    assert "when grades are published" in summary, "publication is unknown at grading time: still withheld"
    path.write_text("{not json")
    with pytest.raises(gradescope_metadata.MetadataError, match="cannot be read"):
        gradescope_metadata.Metadata.read(path)


def test_the_worker_finds_the_harness_with_python_dash_i(tmp_path):
    """setup.sh puts source/ on the interpreter's path: the worker (python -I, no PYTHONPATH) imports it as root."""
    site = tmp_path / "site"
    site.mkdir()
    pth = gradescope.install_runtime(REPO, site)
    assert pth.read_text().strip() == str(REPO.resolve())
    code = f"import site; site.addsitedir({str(site)!r}); import autograder.worker as w; print(w.__file__)"
    found = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True,
                           cwd=tmp_path).stdout
    assert found.strip() == str(REPO / "autograder" / "worker" / "__init__.py")


def test_namespaces_and_landlock_are_probed_and_can_be_turned_off():
    """Where a container refuses namespaces the worker still runs as its own uid, protected by permissions (which the
    Gradescope driver sets) and by Landlock where the kernel allows it; the isolation note in every results file says
    which mode graded."""
    code = ("from autograder.sandbox.isolation import Isolation; i = Isolation.detect(); "
            "print(i.mode, i.landlock, i.note())")

    def detect(**env) -> str:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                              env={**os.environ, **env}).stdout

    on, off, alone = detect(), detect(AUTOGRADER_NAMESPACES="0"), detect(AUTOGRADER_NAMESPACES="0",
                                                                        AUTOGRADER_LANDLOCK="0")
    landlock = int(on.split()[1])
    if is_root:
        assert on.startswith("namespaces") and "isolated: own uid" in on and off.startswith("permissions")
        assert alone.startswith("permissions 0 own uid") and "file permissions only" in alone
        assert ("allow-list of files (Landlock ABI" in off) == (landlock > 0) == ("file permissions only" not in off)
    else:
        assert on.startswith("limits") and off.startswith("limits") and "not running as root" in on
        assert alone.startswith("limits 0 not running as root") and "resource limits only" in alone
    assert landlock == (landlockpy.abi_version() if landlockpy.supported() else 0)


def test_probing_leaves_the_callers_own_processes_alone():
    """The probe starts and stops a worker in the calling process, which reaps what a student left: never a process
    the caller had started already (a library caller's, or an embedding service's)."""
    code = ("import subprocess, psutil; from autograder.sandbox.isolation import Isolation; "
            "child = subprocess.Popen(['sleep', '30']); Isolation.detect(); "
            "print(psutil.Process(child.pid).status()); child.kill()")
    for setting in ("", "0"):
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                             env={**os.environ, "AUTOGRADER_NAMESPACES": setting})
        assert run.returncode == 0 and run.stdout.split() == ["sleeping"], (setting, run.stdout, run.stderr[-2000:])
