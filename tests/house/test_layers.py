"""The import contracts in pyproject.toml hold (``lint-imports``, as ``make test`` runs it), and each one fails when a
forbidden import is added: a copy of the package with one line more is linted against the same contracts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LINT = [sys.executable, "-c",
        "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]

# contract id -> (module file, the line that breaks it)
BREAKS = {
    "layers": ("sandbox/config.py", "from autograder import course"),
    "acyclic": ("batch/discovery.py", "from autograder.batch import jobs"),
    "trusted": ("batch/jobs.py", "import autograder.worker.serve"),
    "worker": ("worker/serve.py", "from autograder import results"),
    "kernel": ("batch/jobs.py", "import autograder.grading.notebook_checks"),
    "student": ("grading/runner.py", "from autograder.batch import gradebook"),
    "suites": ("suites/masking/common.py", "from autograder.sandbox import permissions"),
}


def lint(root: Path, contract: str | None = None) -> subprocess.CompletedProcess:
    chosen = ["--contract", contract] if contract else []
    return subprocess.run([*LINT, "--no-cache", str(REPO / "pyproject.toml"), *chosen], cwd=root, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(root)}, check=False)


def test_the_contracts_hold():
    run = lint(REPO)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """The package's Python files, copied (what grimp reads), in a folder that comes first on the path."""
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(REPO / "autograder", root / "autograder", ignore=shutil.ignore_patterns("__pycache__", "*.zip"))
    return root


@pytest.mark.parametrize("contract", sorted(BREAKS))
def test_a_forbidden_import_breaks_its_contract(copy, contract):
    module, line = BREAKS[contract]
    path = copy / "autograder" / module
    before = path.read_text()
    try:
        assert lint(copy, contract).returncode == 0, f"the copy keeps {contract} before the change"
        path.write_text(before + f"\n{line}  # noqa\n")
        run = lint(copy, contract)
        assert run.returncode != 0 and "BROKEN" in run.stdout, run.stdout + run.stderr
    finally:
        path.write_text(before)
