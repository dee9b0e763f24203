"""The catalogue of known-wrong implementations (``tests/mutants/<assignment>/*.py``).

A mutant is a small file: a docstring naming the mistake in words a student understands (it is
shown as feedback when a submission's output matches the mutant's), a ``# target: FILE`` line,
and the definitions that replace the reference's. ``materialize`` writes the reference with the
mutant's definitions appended, so later definitions win exactly as they would in a student's
file, and the result can be graded like any submission (``autograder validate``) or loaded in
the parent to fingerprint outputs.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace

from autograder import implementations
from autograder.assignment import Assignment

TARGET = re.compile(r"^#\s*target:\s*(\S+)\s*$", re.MULTILINE)


class MutantError(Exception):
    """A mutant file that does not follow the format above."""


@dataclass
class Mutant:
    assignment: Assignment
    path: Path

    @property
    def name(self) -> str:
        return self.path.stem

    @cached_property
    def source(self) -> str:
        return self.path.read_text()

    @property
    def description(self) -> str:
        doc = ast.get_docstring(ast.parse(self.source)) or ""
        if not doc:
            raise MutantError(f"{self.path}: start with a docstring that names the mistake")
        return " ".join(doc.split("\n\n")[0].split())

    @property
    def target(self) -> str:
        match = TARGET.search(self.source)
        if not match or match.group(1) not in self.assignment.files:
            raise MutantError(f"{self.path}: add a '# target: FILE' line naming one of {self.assignment.files}")
        return match.group(1)

    def materialize(self, into: Path) -> Path:
        """Write the reference with this mutant applied into ``into`` (a new folder); return it."""
        shutil.copytree(self.assignment.solution_dir, into)
        target = into / self.target
        body = "\n".join(line for line in self.source.splitlines() if not line.startswith("from __future__"))
        if target.suffix == ".ipynb":  # a last code cell: its definitions replace the notebook's
            notebook = json.loads(target.read_text())
            notebook["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None,
                                      "outputs": [], "source": body})
            target.write_text(json.dumps(notebook, indent=1))
        else:
            target.write_text(target.read_text() + f"\n\n# ---- mutant {self.name} ----\n{body}\n")
        return into

    @cached_property
    def implementation(self) -> SimpleNamespace:
        """The mutant loaded in the grading process (trusted code: ours)."""
        folder = Path(tempfile.mkdtemp(prefix=f"mutant-{self.name}-"))
        try:
            return implementations.load(self.materialize(folder / self.assignment.name), self.assignment.modules)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def catalog(assignment: Assignment) -> list[Mutant]:
    """Every mutant of ``assignment``, sorted by name (empty where ``tests/mutants`` is absent)."""
    if not assignment.mutants_dir.is_dir():
        return []
    return [Mutant(assignment, p) for p in sorted(assignment.mutants_dir.glob("*.py")) if p.name != "__init__.py"]
