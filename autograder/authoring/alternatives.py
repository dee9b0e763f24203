"""The catalogue of correct alternatives (``tests/alternatives/<assignment>/*.py``): solutions written in other
styles, each of which must keep every point.

Only the reference would otherwise prove that a correct solution passes; one reference proves that one style passes.
An alternative is another author's right answer (einsum instead of matmul, a loop over heads, Hugging Face's
rotate-half RoPE, a nanoGPT-style model): a check that fails it fails a student who wrote it that way. The format is a
mutant's (``autograder.grading.mutants``): a docstring saying the style and whom or what it imitates, a
``# target: FILE`` line (one of the assignment's own files, a notebook included) and the definitions that replace the
reference's, appended after it so that they win. Where a rule the skeleton states forces one style (the parameter
names the grader loads its weights into), the rule is said in the alternative's docstring, or in the folder's
``README.md`` where no alternative could be written that way.

``validate`` grades every alternative with the runtime tests (a correct solution must not lose runtime points; one
that is genuinely slower than the stated ratio is no valid alternative) and without the retraining test, unless the
file is marked ``# retraining``: those that change the model or its training are retrained like the reference (a
minute each), the others cannot change what retraining measures. Under fresh secrets they are graded like every
subject, without both (``validate.FRESH_SKIP_TAGS``).
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.course import REPO_ROOT, Assignment
from autograder.grading.mutants import Mutant

RETRAINING = re.compile(r"^#\s*retraining\s*$", re.MULTILINE)


class Alternative(Mutant):
    """One correct implementation in another style, applied to the reference as a mutant is."""

    @property
    def retraining(self) -> bool:
        """Marked ``# retraining``: it changes the model or its training, so validate retrains it."""
        return RETRAINING.search(self.source) is not None


def folder(assignment: Assignment) -> Path:
    return REPO_ROOT / "tests" / "alternatives" / assignment.name


def catalog(assignment: Assignment) -> list[Alternative]:
    """Every alternative of ``assignment``, sorted by name (empty where its folder is absent)."""
    where = folder(assignment)
    if not where.is_dir():
        return []
    return [Alternative(assignment, p) for p in sorted(where.glob("*.py")) if p.name != "__init__.py"]
