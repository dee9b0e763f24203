"""A student's install, as the student zip's README says, then `autograder check` on the reference: full marks or not.

    python bench/student_install.py [--assignment masking] [--python 3.11 3.12] [--torch pypi|cpu|DIR] [--keep]

For each Python: the student zip of ``--assignment`` built from this checkout and unzipped in a fresh folder, the
README's set-up commands run there as written (``autograder.authoring.dist.setup_commands``; ``source`` replaced by
calling the environment's programs by path), the reference's files copied in, then ``autograder check NAME NAME/``.
``--torch`` picks the README's block and where torch comes from:

- ``pypi`` (the default): the macOS block, with nothing from PyTorch's index, under ``PIP_CONFIG_FILE=/dev/null`` and
  without ``PIP_FIND_LINKS`` and the like, so this machine's pip configuration (local wheels, local indexes) is out of
  the way: every package from pypi.org, and on Linux that means torch's CUDA build (2.9 GB downloaded). What a Linux
  student gets who leaves out the CPU line.
- ``cpu``: the Linux block as written, torch from PyTorch's CPU index (which this project's machines cannot reach).
- a folder of wheels (``/opt/wheels`` here): the Linux block with the CPU index replaced by ``--find-links DIR`` and
  the machine's own pip configuration kept: the CPU build without leaving the machine, to measure each zip's size.

It prints, per Python: the install time, the environment's size, torch's build, the check's time and its score line,
and FULL MARKS or NOT FULL MARKS; the exit status is 1 unless every run got full marks. Too heavy for CI (gigabytes
per run, minutes): run by hand, figures in docs/performance.md ("The student install").
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograder import course
from autograder.authoring import dist

# pip's settings that point at this machine's own packages instead of pypi.org.
LOCAL_PIP = ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX")


def interpreter(version: str) -> str:
    """``python3.X`` on the path, else pyenv's 3.X; exits saying what to install when there is none."""
    tests = Path(__file__).resolve().parent.parent / "tests"
    sys.path[:0] = [str(tests / "end_to_end"), str(tests)]  # the test module, and the support package it imports
    from test_student_pythons import interpreter as find

    found = find(version)
    if found is None:
        sys.exit(f"no Python {version} here: install it (pyenv install {version}) or leave it out of --python")
    return found


def commands(readme: str, torch: str) -> list[list[str]]:
    """The README's set-up commands for ``torch`` (see the module docstring), split into words."""
    blocks = dist.setup_commands(readme)
    if torch == "pypi":
        return [shlex.split(line) for line in blocks["macos"]]
    lines = [shlex.split(line) for line in blocks["linux"]]
    if torch != "cpu":
        for words in lines:
            if "--index-url" in words:
                at = words.index("--index-url")
                words[at:at + 2] = ["--find-links", str(Path(torch).resolve())]
    return lines


def size(folder: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(folder)], capture_output=True, text=True, check=True).stdout.split()[0])


def run(name: str, version: str, torch: str, work: Path) -> bool:
    """One install and check (module docstring); prints its figures and returns whether it got full marks."""
    python = interpreter(version)
    with zipfile.ZipFile(dist.write_zip(dist.student_files([name]), work / f"student-{name}.zip")) as archive:
        archive.extractall(work)
    root = work / f"transformer-assignments-{name}"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if torch == "pypi":  # no configuration file, and none of its settings from the environment (PIP_FIND_LINKS)
        env = {key: value for key, value in env.items() if key not in LOCAL_PIP} | {"PIP_CONFIG_FILE": os.devnull}
    bin_dir = root / ".venv" / "bin"
    started = time.perf_counter()
    for words in commands((root / "README.md").read_text(), torch):
        if words[0] == "source":
            continue
        program = [python, *words[1:]] if words[0] == "python3" else [str(bin_dir / words[0]), *words[1:]]
        step = time.perf_counter()
        ran = subprocess.run(program, cwd=root, env=env, capture_output=True, text=True)
        print(f"  {' '.join(words)}: {time.perf_counter() - step:.0f} s", flush=True)
        if ran.returncode != 0:
            print(f"  failed ({ran.returncode}):\n{ran.stdout[-3000:]}{ran.stderr[-3000:]}")
            return False
    installed = time.perf_counter() - started
    build = subprocess.run([str(bin_dir / "python"), "-c", "import platform, torch; print('Python',"
                            " platform.python_version(), 'and torch', torch.__version__)"],
                           capture_output=True, text=True).stdout.strip()
    print(f"  installed in {installed:.0f} s; environment {size(root / '.venv') / 1e9:.2f} GB; {build}")
    assignment = course.load(name)
    for file in assignment.files:
        shutil.copyfile(assignment.solution_dir / file, root / name / file)
    started = time.perf_counter()
    checked = subprocess.run([str(bin_dir / "autograder"), "check", name, f"{name}/"], cwd=root, env=env,
                             capture_output=True, text=True)
    score = re.search(r"Score: *([\d.]+) */ *([\d.]+)", checked.stdout)
    full = checked.returncode == 0 and score is not None and score[1] == score[2]
    print(f"  check: {time.perf_counter() - started:.0f} s, exit {checked.returncode}, "
          f"{score[0] if score else 'no score line'}: {'FULL MARKS' if full else 'NOT FULL MARKS'}")
    if not full:
        print(checked.stdout[-4000:], checked.stderr[-2000:], sep="\n")
    return full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="masking", choices=course.names())
    parser.add_argument("--python", nargs="+", default=["3.11"], help="the Pythons to install under (default 3.11)")
    parser.add_argument("--torch", default="pypi", help="pypi (default), cpu, or a folder of torch wheels")
    parser.add_argument("--keep", action="store_true", help="keep the environments (printed), to look into them")
    options = parser.parse_args()
    results = []
    for version in options.python:
        work = Path(tempfile.mkdtemp(prefix=f"student-install-{version}-"))
        print(f"Python {version}, {options.assignment}, torch from {options.torch}, in {work}:", flush=True)
        try:
            results.append(run(options.assignment, version, options.torch, work))
        finally:
            if not options.keep:
                shutil.rmtree(work, ignore_errors=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
