"""The student distribution and the leak scan: every assignment's zip is complete and clean, a student can
check and zip a submission from it, and every kind of planted leak is refused with the file and the reason."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support.submissions import MASKING, REPO
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
    assert leaks.scan_zip(_built(student_zips, f"student-{name}.zip"), secrets) == []


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_a_student_installs_what_the_assignment_needs_and_no_maintainer_comment(name, student_zips):
    """requirements.txt and the student pyproject.toml list the same requirements, each pinned as the grader pins it:
    what check and zip import, a notebook's JupyterLab and otter (without the grading extras), never the grader's own
    report, similarity, Ray or NVML. (That they suffice: test_a_student_checks_and_zips_from_the_distribution.)"""
    files = _contents(_built(student_zips, f"student-{name}.zip"))
    root = f"transformer-assignments-{name}"
    requirements = [line for line in files[f"{root}/requirements.txt"].decode().splitlines()
                    if not line.startswith("#")]
    student = tomllib.loads(files[f"{root}/pyproject.toml"].decode())
    grader = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert student["project"]["dependencies"] == requirements
    assert student["project"]["requires-python"] == grader["requires-python"]
    names = {_name(line) for line in requirements}
    pinned = {_name(line): line for line in grader["dependencies"] + grader["optional-dependencies"]["notebooks"]}
    assert all(line == pinned[_name(line)].replace("[grading]", "") for line in requirements)
    assert {"torch", "numpy", "pytest", "rich", "psutil", "tomli"} <= names
    assert not names & {"copydetect", "jinja2", "ray", "nvidia-ml-py", "pyyaml", "nbformat", "markdown-it-py"}
    notebooks = any(file.endswith(".ipynb") for file in course.load(name).files)
    assert ({"jupyterlab", "otter-grader", "matplotlib"} <= names) == notebooks
    assert notebooks or not names & {"jupyterlab", "otter-grader"}, "a .py assignment opens no notebook"
    assert ("jupyter lab" in files[f"{root}/README.md"].decode()) == notebooks, "how to open the notebooks, if any"
    text = files[f"{root}/pyproject.toml"].decode()
    assert "#" not in text and not {"mutant", "solutions", "hidden", "hostile"} & set(text.lower().split()), \
        "the student pyproject.toml keeps none of the grader's comments"


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


# Modules of the instructor's tools, which no student command may need.
INSTRUCTOR_MODULES = ("build.py", "validate.py", "mutants.py", "dist.py", "leaks.py", "templates/")


def _student_venv(folder, root) -> str:
    """A fresh virtual environment set up by the student README's commands for Linux, as a student runs them, but with
    nothing downloaded: what a ``pip install`` of requirements asks for (torch from PyTorch's CPU index, the lines of
    requirements.txt) is hard-linked from this environment's installed files, with what it requires and nothing else
    (a requirement missing from the list is missing here too); ``pip install --no-deps -e .`` runs as it is, offline.
    Returns its ``bin`` folder; nothing of the repository's own harness is importable from it."""
    venv = folder / "venv"
    target = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    for command in dist.setup_commands((root / "README.md").read_text())["linux"]:
        words = shlex.split(command)
        if words[:3] == ["python3", "-m", "venv"]:
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        elif words[0] == "source":
            continue  # the environment's programs are run by their path
        elif words[:2] == ["pip", "install"] and "-r" in words:
            _link([line for line in (root / words[words.index("-r") + 1]).read_text().splitlines()
                   if not line.startswith("#")], target)
        elif words[:2] == ["pip", "install"] and "--index-url" in words:
            _link([word for word in words[2:words.index("--index-url")] if not word.startswith("-")], target)
        elif words[:2] == ["pip", "install"]:
            subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), *words[1:],
                            "--quiet", "--no-build-isolation", "--no-index"], cwd=root, check=True, capture_output=True)
        else:
            raise AssertionError(f"a command of the student README this test does not know how to run: {command}")
    return str(venv / "bin")


def _link(requirements: list[str], target: Path) -> None:
    """Install ``requirements`` into the site-packages ``target`` as hard links to this environment's files."""
    site = Path(sysconfig.get_paths()["purelib"])
    for distribution in _installed_with_dependencies(requirements):
        for file in distribution.files:
            source = Path(distribution.locate_file(file))
            if source.is_relative_to(site) and source.is_file() and not (target / source.relative_to(site)).exists():
                (target / source.relative_to(site)).parent.mkdir(parents=True, exist_ok=True)
                os.link(source, target / source.relative_to(site))


# What a student's requirements name that the grader's environment lacks: JupyterLab opens a notebook, and check and
# zip import none of it.
NOT_INSTALLED = {"jupyterlab"}


def _installed_with_dependencies(requirements: list[str]) -> list[metadata.Distribution]:
    """This environment's distributions that ``requirements`` name, and theirs, transitively (markers evaluated
    here; an extra's requirements only where the extra is asked for)."""
    found, asked = {}, set()
    todo = [(Requirement(line), "") for line in requirements]
    while todo:
        requirement, extra = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        if name in NOT_INSTALLED:
            continue
        distribution = found.setdefault(name, metadata.distribution(name))
        for wanted in {"", *requirement.extras} - {extra for known, extra in asked if known == name}:
            asked.add((name, wanted))
            todo += [(Requirement(line), wanted) for line in distribution.requires or []]
    return list(found.values())


def test_the_readme_installs_the_cpu_build_on_linux_and_wsl_and_pypis_torch_on_macos(student_zips):
    """One path per platform, the same but for torch: PyTorch's CPU build on Linux and WSL (PyPI's is the CUDA
    build, 2.9 GB, that only an NVIDIA GPU uses), PyPI's on macOS; the Pythons the package installs on."""
    files = _contents(_built(student_zips, "student-masking.zip"))
    readme = files["transformer-assignments-masking/README.md"].decode()
    requirements = files["transformer-assignments-masking/requirements.txt"].decode().splitlines()
    torch = next(line for line in requirements if line.startswith("torch=="))
    common = ["python3 -m venv .venv", "source .venv/bin/activate"]
    install = ["pip install -r requirements.txt", "pip install --no-deps -e ."]
    assert dist.setup_commands(readme) == {
        "linux": [*common, f'pip install "{torch}" --index-url https://download.pytorch.org/whl/cpu', *install],
        "macos": [*common, *install]}
    assert "You need Python 3.10 to 3.13" in readme and "**With an NVIDIA GPU**" in readme
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"] == ">=3.10,<3.14"


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


def test_zip_warns_of_notebook_answers_still_as_the_starter_notebook_left_them(tmp_path, caplog):
    """A written answer that holds only its placeholder and a choice still ``...`` are named; answered, they are not."""
    attention = course.load("attention")
    skeleton = (attention.skeleton_dir / "attention.ipynb").read_bytes()
    (tmp_path / "attention").mkdir()
    (tmp_path / "attention" / "attention.ipynb").write_bytes(skeleton)
    out = tmp_path / "attention-submission.zip"
    assert cli.main(["zip", "attention", str(tmp_path), "--out", str(out)]) == 1
    assert "notebook answer(s) are still as the skeleton left them" in caplog.text
    assert "attention.ipynb: softmax_axis = ..." in caplog.text
    assert "attention.ipynb: the written answer to Question 1.2 (written). Transformers use" in caplog.text
    caplog.clear()
    solved = notebooks.solved(attention.solution_dir / "attention.ipynb", skeleton)
    (tmp_path / "attention" / "attention.ipynb").write_bytes(solved)
    assert cli.main(["zip", "attention", str(tmp_path), "--out", str(out)]) == 0
    assert "still" not in caplog.text
    with zipfile.ZipFile(out) as packed:
        assert packed.read("attention.ipynb") == solved


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
