"""The line between the trusted grader and the student side: which modules may import which."""

from __future__ import annotations

import ast

from conftest import REPO

PACKAGE = REPO / "autograder"
SHARED = {"autograder.protocol", "autograder.calls", "autograder.notebook_cells", "autograder.forking"}


def _imports(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "autograder":
            found |= {f"autograder.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return {name for name in found if name.startswith("autograder")}


# Runs in the student's own notebook kernel (a `grader.check` cell), answering the public tests' calls there as a
# worker would; no grading process imports it.
IN_THE_STUDENTS_KERNEL = {"autograder.grading.notebook_checks"}


def test_trusted_code_never_imports_the_student_side():
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
        if "worker" not in path.relative_to(PACKAGE).parts and name not in IN_THE_STUDENTS_KERNEL:
            assert not [n for n in _imports(path) if n.startswith("autograder.worker")], path
        assert not _imports(path) & IN_THE_STUDENTS_KERNEL, path


def test_the_student_side_imports_only_what_both_sides_share():
    for path in (PACKAGE / "worker").glob("*.py"):
        assert {n for n in _imports(path) if not n.startswith("autograder.worker")} <= SHARED, path


def test_what_both_sides_share_imports_nothing_else_of_the_grader():
    for name in SHARED:
        assert _imports(PACKAGE / f"{name.split('.')[1]}.py") <= SHARED, name


def test_the_terms_secret_travels_in_the_job_not_in_an_environment(tmp_path, monkeypatch):
    """A runner's environment and command line can be read more widely than its stdin: the secret goes by stdin, and
    a worker's environment holds no path and no secret at all."""
    from autograder.batch.runners import Runners
    from autograder.sandbox.config import Limits
    from autograder.sandbox.isolation import Isolation
    from autograder.sandbox.process import Sandbox

    monkeypatch.setenv("AUTOGRADER_SECRET", "term-secret")
    runners = Runners(Isolation.detect())
    runners.scratch = tmp_path
    assert "AUTOGRADER_SECRET" not in runners.environment()
    worker = Sandbox(tmp_path, {}, Limits(), Isolation.detect())._environment()
    assert "term-secret" not in str(worker) and not [v for k, v in worker.items() if k != "PATH" and "/" in v]
