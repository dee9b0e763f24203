"""``autograder new NAME``: a small working assignment to start from.

It writes, from ``templates/new/``, every piece an assignment has (docs/authoring.md explains each): a solution with
one region (``solutions/NAME/NAME.py``), a suite with its ``assignment.toml``, one public and one hidden test and
the hidden seed (``autograder/suites/NAME/``), one mutant (``tests/mutants/NAME/``) and one correct alternative
(``tests/alternatives/NAME/``); the command then builds the skeleton and the public tests' recorded expectations, so
that ``autograder validate NAME`` passes at once. The templates are instructor-only: the student zip leaves them out
(their solution lines would be the new assignment's).
"""

from __future__ import annotations

import keyword
import secrets
from pathlib import Path

from autograder import course
from autograder.course import CANARY, REPO_ROOT, AssignmentError

TEMPLATES = "new"  # under autograder/templates/


def files(name: str) -> dict[Path, str]:
    """Path (under the project root) -> text of every file ``autograder new name`` writes."""
    from autograder.authoring.dist import render

    suite = Path("autograder", "suites", name)
    values = {"NAME": name, "TITLE": f"{name}: a starter assignment", "CANARY": CANARY}

    def text(template: str) -> str:
        return render(f"{TEMPLATES}/{template}", **values).decode()

    return {
        Path("solutions", name, f"{name}.py"): text("solution.py.in"),
        suite / "assignment.toml": text("assignment.toml.in"),
        suite / "__init__.py": "",
        suite / "conftest.py": text("conftest.py.in"),
        suite / "public" / "__init__.py": "",
        suite / "public" / "test_1_softmax.py": text("public_test.py.in"),
        suite / "hidden" / "__init__.py": "",
        suite / "hidden" / "test_hidden.py": text("hidden_test.py.in"),
        suite / "hidden" / "SECRET": f"{secrets.token_hex(16)}\n",
        suite / "hidden" / "rules.toml": text("rules.toml.in"),
        Path("tests", "mutants", name, "no_max_subtracted.py"): text("mutant.py.in"),
        Path("tests", "alternatives", name, "logsumexp.py"): text("alternative.py.in"),
    }


def create(name: str) -> list[Path]:
    """Write the new assignment ``name``; returns the files written. Refuses a name that is not a lower-case Python
    identifier (it is the module's name), or that an assignment or any of the folders has already."""
    if not name.isidentifier() or keyword.iskeyword(name) or not name.islower():
        raise AssignmentError(f"{name!r} cannot name an assignment: use a lower-case Python identifier (it is the "
                              "module students write), e.g. `autograder new softmax`")
    planned = {REPO_ROOT / path: content for path, content in files(name).items()}
    taken = sorted({"/".join(path.relative_to(REPO_ROOT).parts[:-1]) for path in planned if path.exists()})
    if name in course.names() or any(path.exists() for path in planned):
        raise AssignmentError(f"{name!r} exists already ({', '.join(taken) or 'an assignment of that name'}); pick "
                              "another name, or remove its folders first")
    for path, content in planned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return sorted(planned)
