"""Each package's docstring names exactly the modules it holds: every module and subpackage by its name in double
backquotes, and no plain name there that is not a module or package of ``autograder`` (a module that moved or was
renamed leaves its old name behind; this catches it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
# The suites are the assignments' own folders (docs/authoring.md), not modules of the harness.
PACKAGES = [PACKAGE] + sorted(p for p in PACKAGE.iterdir()
                              if (p / "__init__.py").exists() and p.name != "suites")
NAMED = re.compile(r"``([a-z_][a-z0-9_]*)``")


def held(package: Path) -> set[str]:
    """The modules and subpackages in ``package`` (``__init__`` and ``__main__`` are the package itself)."""
    modules = {f.stem for f in package.glob("*.py") if f.stem not in ("__init__", "__main__")}
    return modules | {d.name for d in package.iterdir() if (d / "__init__.py").exists()}


def everything() -> set[str]:
    """Every module and package name of ``autograder``, the root included."""
    return {PACKAGE.name} | {f.stem for f in PACKAGE.rglob("*.py")} | {
        d.name for d in PACKAGE.rglob("*") if (d / "__init__.py").exists()}


def named(package: Path) -> set[str]:
    return set(NAMED.findall(ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""))


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_package_docstring_names_its_modules(package):
    assert held(package) <= named(package), f"{package.name}'s docstring omits {sorted(held(package) - named(package))}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_package_docstring_names_no_module_that_is_gone(package):
    stale = named(package) - held(package) - everything()
    assert not stale, f"{package.name}'s docstring names {sorted(stale)}, which no module or package of autograder is"


def test_the_check_sees_a_module_left_out_and_a_stale_name(tmp_path):
    fake = tmp_path / "autograder"
    (fake / "role").mkdir(parents=True)
    (fake / "__init__.py").write_text('"""The ``role`` package."""\n')
    (fake / "role" / "__init__.py").write_text('"""Holds ``kept`` and ``gone``."""\n')
    for name in ("kept", "new"):
        (fake / "role" / f"{name}.py").write_text("")
    assert held(fake / "role") - named(fake / "role") == {"new"}
    assert named(fake / "role") - held(fake / "role") - everything() == {"gone"}
