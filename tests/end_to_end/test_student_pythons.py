"""The student package on every Python students have, 3.10 to 3.13: it installs, `autograder --help` runs, and `zip`
finds the submission from the unzipped folder and warns of the skeleton's stubs, under each interpreter the machine
has (``python3.X`` on the path, or under pyenv); those it lacks are skipped with a message.

What needs torch (``check``) is not run here: only Python 3.11 has a local CPU wheel of torch, and the others would
download gigabytes (``bench/student_install.py`` runs ``check`` under Python 3.12 with torch from the index). The
package is built into a wheel once, here, and installed with ``pip install --no-deps`` into a fresh environment of
each interpreter, so pip checks its ``requires-python`` against that interpreter as a student's pip would. What
``--help`` and ``zip`` import besides the standard library is pure Python (``LENT``): this environment's copies are
lent to the others through a ``.pth`` file, so nothing is downloaded.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from support.submissions import MASKING

from autograder.authoring import dist

PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# The packages `autograder --help` and `autograder zip` import (rich, and what rich imports; tomli on Python 3.10):
# pure Python, so this environment's copies run under every interpreter.
LENT = ("rich", "markdown_it", "mdurl", "pygments", "tomli")


def interpreter(version: str) -> str | None:
    """``python3.X`` on the path, else pyenv's newest 3.X (``$PYENV_ROOT``, by default ``~/.pyenv``): the first that
    runs and is that version (pyenv's shims are on the path even for versions not selected), or None."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    installed = sorted(glob.glob(str(root / "versions" / f"{version}.*" / "bin" / f"python{version}")),
                       key=lambda path: int(Path(path).parts[-3].split(".")[2]), reverse=True)
    for candidate in filter(None, [shutil.which(f"python{version}"), *installed]):
        ran = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True)
        if ran.returncode == 0 and ran.stdout.strip() == version:
            return candidate
    return None


@pytest.fixture(scope="module")
def student_copy(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The masking student zip unzipped, its package built into a wheel, and a folder of the ``LENT`` packages."""
    root = tmp_path_factory.mktemp("pythons")
    with zipfile.ZipFile(dist.write_zip(dist.student_files(["masking"]), root / "student-masking.zip")) as archive:
        archive.extractall(root)
    unzipped = root / "transformer-assignments-masking"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--no-index", "--wheel-dir", str(root / "wheel"), str(unzipped)], check=True, capture_output=True)
    lent = root / "lent"
    lent.mkdir()
    for name in LENT:
        module = __import__(name)
        (lent / name).symlink_to(Path(module.__file__).parent)
    return unzipped, next((root / "wheel").glob("*.whl")), lent


def _as_a_student(version: str, python: str, student_copy, folder: Path) -> str:
    """Install the wheel under ``python``, run ``--help`` and ``zip``; returns what went wrong ("" when nothing)."""
    unzipped, wheel, lent = student_copy
    venv = folder / "venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    ran = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                          "--no-deps", "--no-index", "--no-compile", "--disable-pip-version-check", str(wheel)],
                         capture_output=True, text=True)
    if ran.returncode != 0:
        return f"pip install --no-deps of the student package under Python {version}:\n{ran.stderr[-2000:]}"
    site = next(venv.glob("lib/python3.*/site-packages"))
    (site / "lent.pth").write_text(f"{lent}\n")
    work = folder / "student"
    shutil.copytree(unzipped / "masking", work / "masking")
    (work / ".venv" / "masking").mkdir(parents=True)  # an environment beside the work, as students have one
    (work / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (work / ".venv" / "masking" / "masking.py").write_text("# not the student's\n")
    autograder = str(venv / "bin" / "autograder")
    steps = [([autograder, "--help"], 0, "check"),
             ([autograder, "zip", "masking", "."], 1, "masking.py: causal_mask")]
    for command, status, said in steps:
        ran = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=120)
        if ran.returncode != status or said not in ran.stdout + ran.stderr:
            return (f"Python {version}: `{' '.join(command[1:])}` exited {ran.returncode} (expected {status}, "
                    f"saying {said!r}):\n{ran.stdout[-2000:]}{ran.stderr[-2000:]}")
    with zipfile.ZipFile(work / "masking-submission.zip") as packed:
        if packed.read("masking.py") != (MASKING.skeleton_dir / "masking.py").read_bytes():
            return f"Python {version}: the zip does not hold the student's masking.py"
    return ""


@pytest.fixture(scope="module")
def runs(student_copy, tmp_path_factory) -> dict[str, str | None]:
    """Every interpreter's run, side by side (each is mostly waiting on its subprocesses); None where it is missing."""
    found = {version: interpreter(version) for version in PYTHONS}
    with ThreadPoolExecutor(max_workers=len(PYTHONS)) as pool:
        done = {version: pool.submit(_as_a_student, version, python, student_copy, tmp_path_factory.mktemp(version))
                for version, python in found.items() if python}
        return {version: done[version].result() if version in done else None for version in PYTHONS}


@pytest.mark.parametrize("version", PYTHONS)
def test_the_student_package_installs_helps_and_zips(version, runs):
    if runs[version] is None:
        pytest.skip(f"no Python {version} here (python{version} on the path, or pyenv's): not checked")
    assert runs[version] == ""
