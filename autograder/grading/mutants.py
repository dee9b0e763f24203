"""The catalogue of known-wrong implementations (``tests/mutants/<assignment>/*.py``).

A mutant is a small file: a docstring naming the mistake in words a student understands (it is shown as feedback
when a submission's output matches the mutant's), a ``# target: FILE`` line, and the definitions that replace the
reference's. ``validate`` asks every mutant to be named in its own feedback (its output matched on every failing
comparison of some test), except one marked ``# unnamed: WHY`` (say why no comparison can tell it apart: only its
runtime is wrong, or only a property of its output is checked); ``validate`` grades a mutant without the runtime
tests unless it is marked ``# slow`` (its values are right and only they catch it): a wrong value already costs
points in a cheaper test, and the timed rounds are the costly part of a grading. ``materialize`` writes the
reference with the mutant's definitions appended, so later definitions win exactly as they would in a student's file,
and the result can be graded like any submission (``autograder validate``) or loaded in the parent to fingerprint
outputs.

A mutant targets one of its assignment's OWN files. An assignment that carries an earlier one's module
(positions carries masking.py) also borrows that assignment's mutants, applied to the carried file, as
fingerprints: when a positions output matches "the scores are not divided by sqrt(d_k)", the student
learns that the mistake is in their masking.py. Borrowed mutants only name mistakes; ``validate`` asks
only the assignment's own mutants to lose points.
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

from autograder.course import Assignment
from autograder.grading import trusted_import
from autograder.grading.api import carried_mistake

TARGET = re.compile(r"^#\s*target:\s*(\S+)\s*$", re.MULTILINE)
UNNAMED = re.compile(r"^#\s*unnamed:\s*(.+?)\s*$", re.MULTILINE)
SLOW = re.compile(r"^#\s*slow\s*$", re.MULTILINE)


class MutantError(Exception):
    """A mutant file that does not follow the format above."""


@dataclass
class Mutant:
    """One known-wrong implementation, applied to ``assignment``'s reference.

    ``origin`` is None for the assignment's own mutants, or the name of the earlier assignment whose
    mutant this is (it then targets the file carried from there).
    """

    assignment: Assignment
    path: Path
    origin: str | None = None

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
        text = " ".join(doc.split("\n\n")[0].split())
        if self.origin is not None:
            text = carried_mistake(self.target, self.origin, text)
        return text

    @property
    def unnamed(self) -> str | None:
        """Why no graded comparison can name this mistake (its ``# unnamed:`` line), or None: it must be named."""
        match = UNNAMED.search(self.source)
        return match.group(1) if match else None

    @property
    def slow(self) -> bool:
        """Marked ``# slow``: only the runtime tests can catch it."""
        return SLOW.search(self.source) is not None

    @property
    def target(self) -> str:
        if self.origin is None:
            allowed = self.assignment.own_files
        else:
            allowed = [f for f, source in self.assignment.carried.items() if source == self.origin]
        match = TARGET.search(self.source)
        if not match or match.group(1) not in allowed:
            raise MutantError(f"{self.path}: add a '# target: FILE' line naming one of {allowed} (a mutant targets "
                              f"its own assignment's files, never a file carried from an earlier one)")
        return match.group(1)

    def materialize(self, into: Path) -> Path:
        """Write the reference with this mutant applied into ``into`` (a new folder); return it."""
        shutil.copytree(self.assignment.solution_dir, into, symlinks=False)  # a carried file's link becomes a copy
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
        """The mutant loaded in the grading process (trusted code: ours); its notebooks run on first use."""
        folder = tempfile.TemporaryDirectory(prefix=f"mutant-{self.name}-")
        implementation = trusted_import.load(self.materialize(Path(folder.name) / self.assignment.name),
                                              self.assignment.modules, strict=False, lazy=True)
        implementation.hold(folder)  # removed when the implementation is
        return implementation


def catalog(assignment: Assignment) -> list[Mutant]:
    """Every mutant of ``assignment``, sorted by name (empty where ``tests/mutants`` is absent)."""
    return [Mutant(assignment, p) for p in _files(assignment.mutants_dir)]


def fingerprints(assignment: Assignment) -> list[Mutant]:
    """The mutants whose outputs name mistakes: the assignment's own, then those of every assignment it
    carries a file from, applied to the carried copy."""
    found = catalog(assignment)
    for source in dict.fromkeys(assignment.carried.values()):
        for path in _files(assignment.mutants_dir.parent / source):
            borrowed = Mutant(assignment, path, origin=source)
            try:
                borrowed.target  # noqa: B018 - only mutants of a file this assignment carries apply
            except MutantError:
                continue
            found.append(borrowed)
    return found


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.glob("*.py")) if p.name != "__init__.py"]
