"""The student distribution and the leak scan: every assignment's zip is complete and clean, a student can
check and zip a submission from it, and every kind of planted leak is refused with the file and the reason."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import MASKING, REPO
from test_notebooks import master

from autograder import cli, course, handin
from autograder.authoring import dist, leaks, markers, notebooks
from autograder.course import CANARY

pytestmark = pytest.mark.slow

ASSIGNMENTS = course.names()


@pytest.fixture(scope="module")
def secrets() -> leaks.Secrets:
    return leaks.collect()


@pytest.fixture(scope="module")
def student_zips(tmp_path_factory, secrets) -> dict:
    """Every zip of ``autograder dist student --out DIR``, built and scanned one by one: the path, or the
    refusal (so one assignment's leak fails its own tests, not every assignment's)."""
    out = tmp_path_factory.mktemp("dist")
    planned = {f"student-{name}.zip": [name] for name in ASSIGNMENTS} | {"student-all.zip": ASSIGNMENTS}
    built = {}
    for zip_name, names in planned.items():
        try:
            files = dist.student_files(names)
            dist.check_leaks(files, out / zip_name, secrets)
        except (dist.DistError, leaks.LeakError) as refused:
            built[zip_name] = refused
        else:
            built[zip_name] = dist.write_zip(files, out / zip_name)
    return built


def _built(student_zips, zip_name: str):
    built = student_zips[zip_name]
    if isinstance(built, Exception):
        pytest.fail(str(built))
    return built


def _contents(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_command_writes_one_student_zip_per_assignment_and_one_for_all(student_zips, tmp_path):
    assert cli.main(["dist", "student", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == set(student_zips)
    assert (tmp_path / "student-masking.zip").read_bytes() == _built(student_zips, "student-masking.zip").read_bytes()
    _built(student_zips, "student-all.zip")


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_student_zip_holds_what_a_student_needs_and_nothing_hidden(name, student_zips, secrets):
    files = _contents(_built(student_zips, f"student-{name}.zip"))
    top = {key.split("/")[0] for key in files}
    assert top == {f"transformer-assignments-{name}"}, "one folder, so unzipping does not spill files"
    inside = {key.split("/", 1)[1] for key in files}
    assignment = course.load(name)
    assert {"README.md", "requirements.txt", "pyproject.toml", "autograder/cli.py", "autograder/worker/__main__.py",
            f"autograder/suites/{name}/assignment.toml", f"autograder/suites/{name}/public/expected.zip"} <= inside
    assert {f"{name}/{file}" for file in assignment.files} <= inside, "the skeletons, carried files included"
    assert not [key for key in inside if "/hidden/" in key or key.startswith(("solutions/", "tests/"))]
    assert not [key for key in inside if key.startswith(tuple(f"autograder/{m}" for m in INSTRUCTOR_MODULES))], \
        "only what a student's check and zip run"
    for source in assignment.carried.values():
        assert f"autograder/suites/{source}/public/__init__.py" in inside, "a carried assignment's public checks"
    readme = files[f"transformer-assignments-{name}/README.md"].decode()
    assert f"autograder check {name} {name}/" in readme and f"autograder zip {name} {name}/" in readme
    for file, source in assignment.carried.items():
        assert f"`{source}/{file}`" in readme, "the README says which file to copy from which assignment"
    pinned = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    requirements = files[f"transformer-assignments-{name}/requirements.txt"].decode().splitlines()
    notebooks = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["notebooks"]
    assert [line for line in requirements if not line.startswith("#")] == pinned + notebooks
    assert any(line.startswith("jupyterlab") for line in notebooks) and "jupyter lab" in readme, \
        "the README says how to open the notebooks, with what requirements.txt installs"
    assert leaks.scan_zip(_built(student_zips, f"student-{name}.zip"), secrets) == []


# Modules of the instructor's tools, which no student command may need.
INSTRUCTOR_MODULES = ("build.py", "validate.py", "mutants.py", "dist.py", "leaks.py", "templates/")


def _student_venv(folder, root) -> str:
    """A fresh virtual environment set up as the student README says: the pinned requirements (hard links to this
    environment's installed packages, so nothing is downloaded) and ``pip install --no-deps -e .`` of the unzipped
    folder. Returns its ``bin`` folder; nothing of the repository's own harness is importable from it."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    target = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    for entry in site.iterdir():
        if not entry.name.startswith(("__editable__", "transformer_autograder", "__pycache__")):
            subprocess.run(["cp", "-al", str(entry), str(target)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--no-deps", "--no-build-isolation", "--no-index", "-e", str(root)], check=True,
                   capture_output=True)
    return str(venv / "bin")


def _check_as_a_student(name: str, zip_path, folder) -> tuple[str, str]:
    """Unzip, install as the README says, put the reference's files in the assignment folder, run `check` then
    `zip` as a student would, and ask for an instructor command; returns an error ("" when all behave) and the
    submission zip's file list."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(folder)
    root = folder / f"transformer-assignments-{name}"
    bin_dir = _student_venv(folder, root)
    assignment = course.load(name)
    for file in assignment.files:
        shutil.copyfile(assignment.solution_dir / file, root / name / file)
    for command in ("check", "zip"):
        where = name if command == "check" else "."  # zip from the unzipped folder, above the assignment's
        run = subprocess.run([f"{bin_dir}/autograder", command, name, where], cwd=root, capture_output=True,
                             text=True, timeout=600)
        if run.returncode != 0 or (command == "check" and "Score:" not in run.stdout):
            return f"`autograder {command} {name}` failed:\n{run.stdout[-3000:]}{run.stderr[-3000:]}", ""
    harness = subprocess.run([f"{bin_dir}/python", "-c", "import autograder; print(autograder.__file__)"],
                             cwd=folder, capture_output=True, text=True, check=True).stdout.strip()
    if harness != str(root / "autograder" / "__init__.py"):
        return f"the student's environment imports the harness from {harness}, not from the student copy", ""
    refused = subprocess.run([f"{bin_dir}/autograder", "validate", name], cwd=root, capture_output=True, text=True)
    if refused.returncode != 2 or "for course staff" not in refused.stderr:
        return f"`autograder validate` in the student copy: {refused.returncode}\n{refused.stderr[-3000:]}", ""
    with zipfile.ZipFile(root / f"{name}-submission.zip") as packed:
        return "", " ".join(sorted(packed.namelist()))


@pytest.fixture(scope="module")
def student_checks(student_zips, tmp_path_factory) -> dict:
    """Every assignment checked from its student zip, two at a time (CI has two cores)."""
    ready = [name for name in ASSIGNMENTS if not isinstance(student_zips[f"student-{name}.zip"], Exception)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda name: _check_as_a_student(name, student_zips[f"student-{name}.zip"],
                                                         tmp_path_factory.mktemp(name)), ready)
        return dict(zip(ready, runs, strict=True))


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_a_student_checks_and_zips_from_the_distribution(name, student_zips, student_checks):
    """Without solutions, the public tests replay to full marks on the reference's files, and `autograder zip`
    packs exactly the required files."""
    _built(student_zips, f"student-{name}.zip")
    error, packed = student_checks[name]
    assert not error, error
    assert packed.split() == sorted(course.load(name).files)


def test_zip_names_what_is_missing_and_takes_extra_files(tmp_path, caplog):
    assert cli.main(["zip", "masking", str(tmp_path)]) == 2
    assert "no masking.py in" in caplog.text and not (tmp_path / "masking-submission.zip").exists()
    (tmp_path / "masking.py").write_text("# mine\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "test.predictions").write_text("Paris\n")
    out = tmp_path / "out.zip"
    assert cli.main(["zip", "masking", str(tmp_path), str(tmp_path / "runs" / "test.predictions"),
                     "--out", str(out)]) == 0
    with zipfile.ZipFile(out) as packed:
        assert sorted(packed.namelist()) == ["masking.py", "test.predictions"]
    assert cli.main(["zip", "masking", str(tmp_path), str(tmp_path / "nothing.predictions")]) == 2
    carried = next((a for a in map(course.load, ASSIGNMENTS) if a.carried), None)
    if carried is not None:
        file, source = next(iter(carried.carried.items()))
        (tmp_path / "empty").mkdir()
        with pytest.raises(handin.HandInError, match=f"copy your {file} from the {source} assignment"):
            handin.pack_submission(carried.name, tmp_path / "empty")


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_skeletons_stubs_are_unfinished_and_the_references_are_not(name):
    assignment = course.load(name)
    stubs = handin.unfinished(name, assignment.skeleton_dir)
    assert stubs and all(stub.split(": ")[0] in assignment.own_files for stub in stubs), stubs
    assert handin.unfinished(name, assignment.solution_dir) == []


def test_zip_finds_the_work_from_the_folder_above_warns_of_stubs_and_says_what_it_replaced(tmp_path, caplog,
                                                                                          monkeypatch):
    """As from the unzipped student folder: the assignment's folder beside a virtual environment and caches."""
    monkeypatch.chdir(tmp_path)
    caplog.set_level("INFO")
    (tmp_path / ".venv" / "masking").mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / ".venv" / "masking" / "masking.py").write_text("# not the student's\n")
    (tmp_path / "masking").mkdir()
    shutil.copyfile(MASKING.skeleton_dir / "masking.py", tmp_path / "masking" / "masking.py")
    assert cli.main(["zip", "masking", str(tmp_path)]) == 1
    assert "wrote masking-submission.zip (masking.py); upload it" in caplog.text
    assert "function(s) still raise NotImplementedError" in caplog.text and "masking.py: causal_mask" in caplog.text
    assert handin.locate("masking", tmp_path) == handin.locate("masking", tmp_path / "masking") == tmp_path / "masking"
    caplog.clear()
    shutil.copyfile(MASKING.solution_dir / "masking.py", tmp_path / "masking" / "masking.py")
    assert cli.main(["zip", "masking", str(tmp_path)]) == 0
    assert "replacing the zip that was there" in caplog.text and "NotImplementedError" not in caplog.text
    (tmp_path / "copy").mkdir()
    shutil.copyfile(MASKING.solution_dir / "masking.py", tmp_path / "copy" / "masking.py")
    with pytest.raises(handin.HandInError, match="copy/, .*masking/ hold them: give one"):
        handin.locate("masking", tmp_path)


def _solution_line(secrets: leaks.Secrets) -> str:
    source = (REPO / "solutions" / "masking" / "masking.py").read_text()
    return next(line.strip() for line in markers.marked_solution_lines(source)
                if leaks.normalise(line) in secrets.lines)


def _with_member(archive_bytes: bytes, name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive_bytes)) as original, zipfile.ZipFile(buffer, "w") as copy:
        for member in original.namelist():
            copy.writestr(member, original.read(member))
        copy.writestr(name, data)
    return buffer.getvalue()


def test_planted_leaks_are_refused_with_the_file_and_the_reason(secrets, tmp_path):
    files = dist.student_files(["masking"])
    root = "transformer-assignments-masking"
    skeleton, public = f"{root}/masking/masking.py", f"{root}/autograder/suites/masking/public/test_1_masks.py"
    expected = f"{root}/autograder/suites/masking/public/expected.zip"
    hidden = course.load("masking").hidden_dir / "test_hidden.py"
    hidden_name = sorted(name for name, origin in secrets.test_names.items() if origin.endswith("test_hidden.py"))[0]
    line = _solution_line(secrets)
    mutant = sorted(course.load("masking").mutants_dir.glob("[a-z]*.py"))[0]
    plants = {
        "canary": ({public: files[public] + f"\n# {CANARY}\n".encode()}, public, "canary"),
        "canary in a nested zip": ({expected: _with_member(files[expected], "notes.txt", CANARY.encode())},
                                   f"{expected}/notes.txt", "canary"),
        "solution line": ({skeleton: files[skeleton] + f"\n\ndef helper(q, k, v, mask):\n    {line}\n".encode()},
                          skeleton, "a line of the solution"),
        "re-indented solution line": ({public: files[public] + f"\n#\n{'  '.join(line.split(' '))}\n".encode()},
                                      public, "a line of the solution"),
        "hidden test name": ({f"{root}/NOTES.md": f"see {hidden_name} for the edge cases".encode()},
                             f"{root}/NOTES.md", f"hidden test {hidden_name}"),
        "hidden file": ({f"{root}/autograder/suites/masking/hidden/test_hidden.py": hidden.read_bytes()},
                        f"{root}/autograder/suites/masking/hidden/test_hidden.py", "hidden folder"),
        "solutions folder": ({f"{root}/solutions/masking.py": b"pass\n"}, f"{root}/solutions/masking.py",
                             "hidden folder"),
        "instructor-only labels": ({f"{root}/masking/private/test_labels.tsv": b"q\ta\n"},
                                   f"{root}/masking/private/test_labels.tsv", "hidden folder"),
        "seed": ({f"{root}/autograder/suites/masking/SECRET": b"term-seed\n"},
                 f"{root}/autograder/suites/masking/SECRET", "SECRET file"),
        "renamed mutant": ({f"{root}/masking/example.py": mutant.read_bytes()}, f"{root}/masking/example.py",
                           f"copy of the hidden file tests/mutants/masking/{mutant.name}"),
    }
    for label, (change, where, reason) in plants.items():
        target = tmp_path / f"{label}.zip"
        with pytest.raises(leaks.LeakError) as refused:
            dist.check_leaks({**files, **change}, target, secrets)
        message = str(refused.value)
        assert f"{where}: " in message and reason in message, f"{label}: {message}"
        assert str(target) in message and "autograder build" in message


def test_otter_copying_a_solution_line_out_of_its_block_is_refused(tmp_path):
    """Otter Assign copies solution code outside a solution block into the student notebook silently."""
    secrets = leaks.Secrets()
    path = master(tmp_path, helper_outside_block=True)
    secrets.add_notebook(path)
    built = {f"demo/{name}": data for name, data in notebooks.assign(path).items()}
    found = leaks.scan(built, secrets)
    assert [str(leak) for leak in found] == [
        f"demo/demo.ipynb: contains a line of the solution in {path}: 'doubled_value = 2 * x'"]
    (tmp_path / "ok").mkdir()
    clean = {f"demo/{name}": data for name, data in notebooks.assign(master(tmp_path / "ok")).items()}
    assert leaks.scan(clean, secrets) == []


def test_the_command_refuses_and_writes_nothing(monkeypatch, tmp_path, caplog):
    real = dist.student_files

    def planted(names):
        files = real(names)
        files[f"transformer-assignments-{names[0]}/notes.md"] = f"# {CANARY}\n".encode()
        return files

    monkeypatch.setattr(dist, "student_files", planted)
    assert cli.main(["dist", "student", "masking", "--out", str(tmp_path)]) == 2
    assert "refusing to write" in caplog.text and "notes.md: carries the hidden-file canary" in caplog.text
    assert list(tmp_path.iterdir()) == []


def test_matching_is_whitespace_blind_but_token_exact():
    secrets = leaks.Secrets(lines={"x = a + b": "solution.py"}, test_names={"test_secret_case": "hidden.py"})
    assert leaks.scan({"f.py": b"y = 1\n    x  =  a +\n b\n"}, secrets)
    assert not leaks.scan({"f.py": b"xx = a + bb\n"}, secrets)
    assert not leaks.scan({"f.py": b"test_secret_cases = 1\n"}, secrets)
    assert leaks.scan({"f.md": b"(test_secret_case)"}, secrets)
    notebook = {"cells": [{"cell_type": "code", "source": ["x = a", " + b\n"]}]}
    assert leaks.scan({"n.ipynb": json.dumps(notebook).encode()}, secrets), "notebooks are read cell by cell"
    assert not leaks.scan({"blob.bin": b"\xff\xfex = a + b"}, secrets), "binary files are checked for canaries only"


SOLUTION = """
def attend(q, k, v, mask):
    scores = q @ k.transpose(-2, -1)
    B, T, D = q.shape
    # BEGIN SOLUTION weights = scores.softmax(dim=-1); return weights @ v
    scores = q @ k.transpose(-2, -1)
    B, T, D = q.shape
    weights = scores.softmax(dim=-1)
    return torch.einsum("bts,bsd->btd", weights, v)
    # END SOLUTION


def scale(x):
    return x / math.sqrt(x.shape[-1])  # SOLUTION divide by sqrt(d)
"""


def test_what_skeletons_show_is_not_secret():
    """Given code that a region repeats, a hint that spells out a line, and plain unpacking are not leaks;
    the rest of the region and the # SOLUTION line are."""
    secrets = leaks.Secrets()
    secrets.drop_shown([secrets.add_python(SOLUTION, "solutions/demo/demo.py")])
    assert set(secrets.lines) == {'return torch.einsum("bts,bsd->btd", weights, v)',
                                  "return x / math.sqrt(x.shape[-1])"}
