"""`autograder new`: the scaffold of docs/authoring.md is a working assignment. In a copy of the harness (so that the
repository never holds a fifth assignment) it builds, validates (reference full marks, skeleton none, its mutant
caught, its correct alternative at full marks, and a wrong "alternative" failing validate) and ships through `dist`
without its hidden test, solution, mutant or alternative."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import asdict
from pathlib import Path

import pytest

from autograder import cli, course
from autograder.authoring import scaffold
from autograder.course import CANARY, PACKAGE_DIR, REPO_ROOT
from autograder.sandbox.config import Limits


def autograder(root: Path, *args: str) -> subprocess.CompletedProcess:
    """``autograder ARGS`` run on the harness copied to ``root``."""
    environment = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=root, env=environment,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path) -> Path:
    """A project root holding the harness and no assignment."""
    root = tmp_path / "course"
    shutil.copytree(PACKAGE_DIR, root / "autograder", ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or (Path(folder) == PACKAGE_DIR / "suites" and n != "__init__.py")])
    shutil.copy(REPO_ROOT / "pyproject.toml", root)
    return root


def test_the_scaffold_builds_validates_and_ships_without_leaks(project, tmp_path):
    made = autograder(project, "new", "demo")
    assert made.returncode == 0, made.stdout + made.stderr
    suite = project / "autograder" / "suites" / "demo"
    assert (project / "assignments" / "demo" / "demo.py").is_file() and (suite / "public" / "expected.zip").is_file()
    skeleton = (project / "assignments" / "demo" / "demo.py").read_text()
    assert "raise NotImplementedError(\"softmax: subtract each row's maximum first" in skeleton
    assert ".exp()" not in skeleton
    mutant = project / "tests" / "mutants" / "demo" / "no_max_subtracted.py"
    assert CANARY in (suite / "hidden" / "test_hidden.py").read_text() and CANARY in mutant.read_text()

    validated = autograder(project, "validate", "demo", "--jobs", "1")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    said = " ".join(validated.stdout.split())  # rich wraps long lines
    assert "OK demo: reference 5/5, skeleton 0, 1 mutants all caught, 1 alternatives at full marks" in said
    assert re.search(r"^alternative-logsumexp +5/5 ", validated.stdout, re.MULTILINE), "alternatives are in the matrix"

    # A wrong "alternative" (the mutant) fails validate: an alternative must keep every point, under every secret.
    shutil.copy(mutant, project / "tests" / "alternatives" / "demo" / "wrong.py")
    wrong = autograder(project, "validate", "demo", "--jobs", "1", "--fresh-secrets", "1")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    output = " ".join(wrong.stdout.split())  # rich wraps long lines
    assert "FAIL demo: alternative-wrong, a correct alternative, loses points on: " in output
    assert "under the secret 'validate-fresh-1' the alternative-wrong loses points on: " in output
    (project / "tests" / "alternatives" / "demo" / "wrong.py").unlink()

    shipped = autograder(project, "dist", "student", "demo", "--out", str(tmp_path / "dist"))
    assert shipped.returncode == 0, shipped.stdout + shipped.stderr
    with zipfile.ZipFile(tmp_path / "dist" / "student-demo.zip") as student:
        names = student.namelist()
        text = b"".join(student.read(n) for n in names)
    folder = "transformer-assignments-demo"
    assert {f"{folder}/demo/demo.py", f"{folder}/autograder/suites/demo/public/test_1_softmax.py",
            f"{folder}/autograder/suites/demo/public/expected.zip"} <= set(names)
    assert not [n for n in names if "/hidden/" in n or "mutants/" in n or "solutions/" in n or "templates/new" in n
                or "alternatives/" in n]
    assert CANARY.encode() not in text and b"test_demo_secret_large_scores" not in text
    assert b"shifted = scores - scores.max(dim=-1, keepdim=True).values" not in text


def test_new_refuses_a_taken_or_unusable_name(caplog):
    assert cli.main(["new", "masking"]) == 2
    assert cli.main(["new", "Soft-Max"]) == 2
    assert "'masking' exists already" in caplog.text and "use a lower-case Python identifier" in caplog.text
    assert "soft_max" not in course.names()


def test_every_limit_is_stated_in_the_toml(tmp_path, monkeypatch):
    """An assignment's [limits] lists every limit, so that its toml says what applies; a missing one is named."""
    monkeypatch.setattr(course, "SUITES_DIR", tmp_path)
    (tmp_path / "partial").mkdir()
    (tmp_path / "partial" / "assignment.toml").write_text('modules = [{ name = "partial" }]\n\n[limits]\nthreads = 1\n')
    with pytest.raises(course.AssignmentError, match=r"\[limits\] must state every limit; add memory_mb, "):
        course.load("partial")
    made = tomllib.loads(scaffold.files("demo")[Path("autograder", "suites", "demo", "assignment.toml")])
    assert Limits.from_config(made["limits"]).threads == 1, "the scaffold states every limit"


def _maker(parser: argparse.ArgumentParser):
    """``cli.build_parser``'s way of making a subcommand's parser, on ``parser``."""
    subparsers = parser.add_subparsers(dest="command")
    return lambda name, summary, example: subparsers.add_parser(name, help=summary, epilog=example)


def test_an_assignment_adds_subcommands_through_its_toml(tmp_path, monkeypatch):
    """[commands] NAME = "module:function" adds `autograder NAME`; a name autograder or another assignment has is
    refused, and so is a target that cannot be imported."""
    importlib.import_module("autograder.suites.lm.world")  # it reads the lm toml on import: before SUITES_DIR moves
    monkeypatch.setattr(course, "SUITES_DIR", tmp_path)
    limits = "".join(f"{key} = {value}\n" for key, value in asdict(Limits()).items())

    def declare(name: str, commands: str) -> None:
        (tmp_path / name).mkdir()
        (tmp_path / name / "assignment.toml").write_text(
            f'modules = [{{ name = "{name}" }}]\n\n[limits]\n{limits}\n[commands]\n{commands}\n')

    declare("first", 'planet = "autograder.suites.lm.world:subcommand"')
    parser = argparse.ArgumentParser()
    handlers = course.add_commands(_maker(parser), [*cli.COMMANDS, *cli.INSTRUCTOR_COMMANDS])
    assert list(handlers) == ["planet"] and parser.parse_args(["planet", "--seed", "3"]).seed == "3"
    declare("second", 'grade = "autograder.suites.lm.world:subcommand"')
    with pytest.raises(course.AssignmentError, match=r"\[commands\] grade is taken"):
        course.add_commands(_maker(argparse.ArgumentParser()), [*cli.COMMANDS, *cli.INSTRUCTOR_COMMANDS])
    (tmp_path / "second" / "assignment.toml").unlink()
    declare("third", 'moon = "autograder.suites.nowhere:subcommand"')
    with pytest.raises(course.AssignmentError, match=r"moon = 'autograder.suites.nowhere:subcommand' cannot be"):
        course.add_commands(_maker(argparse.ArgumentParser()), [*cli.COMMANDS, *cli.INSTRUCTOR_COMMANDS])
