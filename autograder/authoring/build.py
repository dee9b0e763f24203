"""Building the student skeletons from ``solutions/`` and recording the public tests' expected values.

A solution region is marked ``# BEGIN SOLUTION [hint]`` ... ``# END SOLUTION``, or is a single
line ending in ``# SOLUTION [hint]``. In the skeleton the region becomes, at the marker's
indentation, ``raise NotImplementedError("<function>: <hint>")``; the hint is what a TA would say
first. Everything outside regions (signatures, docstrings with shapes, given code) is copied.

Master notebooks are built with Otter Assign (``autograder.authoring.notebooks``); their written questions
are listed in the suite's ``manual.json`` so the grader can collect the answers.

``build --check`` regenerates the skeletons and ``manual.json`` into memory and reports any file that differs, and
reports a ``public/expected.zip`` whose fingerprint is not that of the current sources, which is what CI runs:
generated files are never edited by hand. It does not record the values again (a minute, for values that only a
change of sources can move): tests/grading/test_recordings_across_cpus.py records them again, under another CPU's
kernels, and compares them with the committed ones, and ``validate`` grades the reference against the recording.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from autograder import course, scratch
from autograder.authoring import leaks, notebooks
from autograder.authoring.markers import SKIP, BuildError, strip_solutions
from autograder.grading import FLOAT_TOLERANCE, naming, tolerance
from autograder.grading.oracle import PROBES, load_store, read_store, store_fingerprint
from autograder.grading_options import GradingOptions
from autograder.results import Results

HAND_IN = ".predictions"  # what the reference hands in beside its code (the lm's holds the test answers): no starter


def skeleton_files(assignment: course.Assignment) -> dict[str, bytes]:
    """Relative path -> content of every file of the generated skeleton.

    Python files lose their solution regions; master notebooks go through Otter Assign and are
    refused if any solution or hidden-test line survives; other files are copied.
    """
    files = {}
    for path in sorted(assignment.solution_dir.rglob("*")):
        relative = path.relative_to(assignment.solution_dir)
        if not path.is_file() or SKIP & set(relative.parts) or path.suffix == HAND_IN:
            continue
        if path.suffix == ".py":
            files[str(relative)] = strip_solutions(path.read_text(), str(relative)).encode()
        elif path.suffix == ".ipynb":
            built = {str(relative.parent / name): data for name, data in notebooks.assign(path).items()}
            leaked = leaks.scan(built, leaks.Secrets.of_notebook(path))
            if leaked:
                raise BuildError(f"{path}: solution or hidden-test lines would reach students (put them inside "
                                 "a solution block):\n" + "\n".join(f"  {leak}" for leak in leaked))
            files.update(built)
        else:
            files[str(relative)] = path.read_bytes()
    return files


def manual_questions(assignment: course.Assignment) -> list[dict]:
    """The written questions of every master notebook, in file order."""
    questions = []
    for entry in assignment.modules:
        if entry.get("notebook"):
            questions += notebooks.manual_questions(assignment.solution_dir / entry["notebook"])
    return questions


def build(names: list[str], check: bool = False) -> list[str]:
    """Write (or, with ``check``, compare) every skeleton and expected-values file; return problems."""
    problems = []
    for name in names:
        assignment = course.load(name)
        if not assignment.has_reference:
            problems.append(f"{name}: no reference in {assignment.solution_dir}; nothing to build from")
            continue
        try:
            generated = skeleton_files(assignment)
        except (BuildError, notebooks.NotebookError) as exc:
            problems.append(str(exc))
            continue
        questions = json.dumps(manual_questions(assignment), indent=1) + "\n"
        manual = assignment.manual_file
        if check and (manual.read_text() if manual.is_file() else "[]\n") != questions:
            problems.append(f"{manual} is out of date: run `autograder build {name}`")
        elif not check and questions != "[]\n":
            manual.write_text(questions)
        target = assignment.skeleton_dir
        existing = {str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()
                    and not SKIP & set(p.relative_to(target).parts)} if target.is_dir() else set()
        if check:
            for relative, content in generated.items():
                path = target / relative
                if not path.is_file() or path.read_bytes() != content:
                    problems.append(f"{path} is out of date: run `autograder build {name}`")
            problems += [f"{target / r} is not generated from solutions/: remove it" for r in existing - set(generated)]
        else:
            for relative in existing - set(generated):
                (target / relative).unlink()
            for relative, content in generated.items():
                (target / relative).parent.mkdir(parents=True, exist_ok=True)
                (target / relative).write_bytes(content)
        problems += recording_problems(assignment) if check else record_expected(assignment)
    return problems


def recording_problems(assignment: course.Assignment) -> list[str]:
    """What is wrong with the committed recording: missing, made from other sources than the current ones, or
    lacking naming probes' values."""
    current = assignment.expected_file
    if current.is_file() and store_fingerprint(current) == assignment.recording_fingerprint():
        return incomplete(assignment, current)
    return [f"{current} is out of date (recorded from other sources): run `autograder build {assignment.name}`"]


def incomplete(assignment: course.Assignment, store: Path) -> list[str]:
    """The problem with a recording that lacks some of the suite's naming probes (a student's ``check`` could not
    confirm the names they decide). The probes are asked after the tests, the last thing a recording does, so a
    recording stopped by the grading's time budget (``submission_timeout``, on a busy machine) passed every test and
    still lacked them."""
    recorded = {key.rsplit("#", 2)[0] for key in load_store(store)[0]}
    missing = [probe.name for probe in naming.probes_of(f"autograder.suites.{assignment.name}")
               if f"{PROBES}/{probe.name}" not in recorded]
    if not missing:
        return []
    return [f"{assignment.name}: the recording lacks the values of {len(missing)} naming probes (from "
            f"{missing[0]!r}): it stopped before it had asked them all, as a recording that runs past "
            f"{assignment.submission_timeout:g} s on a busy machine does; run `autograder build {assignment.name}` "
            "again on a quieter machine"]


def record_expected(assignment: course.Assignment) -> list[str]:
    """Grade the reference on the public tests, recording every oracle answer (students replay them)."""
    with scratch.folder("build") as temp:
        store = temp / "expected.zip"
        job = {"assignment": assignment.name, "submission": str(assignment.solution_dir), "name": "reference",
               "out": str(temp / "out"), "record_to": str(store),
               "options": GradingOptions(public_only=True, oracle="record").to_json()}
        process = subprocess.run([sys.executable, "-m", "autograder.grading.runner"], input=json.dumps(job),
                                 capture_output=True, text=True, check=False)
        if process.returncode != 0 or not store.is_file():
            output = process.stdout[-2000:] + process.stderr[-2000:]
            return [f"{assignment.name}: recording expected values failed:\n{output}"]
        graded = Results.from_gradescope(json.loads((Path(temp) / "out" / "results.json").read_text()))
        failing = [f"{t.number} {t.name}" for t in graded.tests if t.score < t.max_score]
        if failing:  # a check the reference fails is not recorded, so students could never pass it
            return [f"{assignment.name}: the reference fails public tests while recording, so their expected "
                    f"values are incomplete: {'; '.join(failing)}"]
        if problems := incomplete(assignment, store):
            return problems
        current = assignment.expected_file
        if not (current.is_file() and store_fingerprint(current) == store_fingerprint(store)
                and same_store(current, store)):
            shutil.copyfile(store, current)
    return []


def same_store(a: Path, b: Path) -> bool:
    """Both recordings hold the same keys and values, floating point at the grader's default tolerances.

    Another CPU (its vector kernels, its BLAS code path) or thread count changes the last bits of a result, Python
    floats included, which is not a reason to rebuild; a check whose recorded value moves by more than the
    grader's tolerance between CPUs must be redesigned, since students replay the recording on their own CPU.
    """
    left, right = read_store(a), read_store(b)
    if left.keys() != right.keys():
        return False
    return all(_same(left[k], right[k]) for k in left)


def _same(x, y) -> bool:
    if isinstance(x, np.ndarray | np.generic) and isinstance(y, np.ndarray | np.generic):
        x, y = torch.from_numpy(np.array(x)), torch.from_numpy(np.array(y))
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.is_floating_point():
            rtol, atol = tolerance(x.dtype)
            return torch.allclose(x.double(), y.double(), rtol=rtol, atol=atol, equal_nan=True)
        return torch.equal(x, y)
    if isinstance(x, float) and isinstance(y, float):
        rtol, atol = FLOAT_TOLERANCE
        return bool(np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(x, tuple | list) and isinstance(y, tuple | list):
        return len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y, strict=True))
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    return type(x) is type(y) and x == y
