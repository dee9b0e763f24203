"""Where an assignment's pieces live, and its ``assignment.toml``.

Each assignment ``NAME`` has ``solutions/NAME/`` (reference), ``assignments/NAME/`` (generated
skeleton), ``autograder/suites/NAME/`` (``assignment.toml``, ``public/`` tests that ship to
students, ``hidden/`` tests that never do) and ``tests/mutants/NAME/`` (known-wrong versions).
New assignments are picked up by adding those folders: nothing here lists them by name.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox import Limits

# Every file that must never reach students (hidden tests, mutants) carries this line, so a
# distribution can be refused when one slips in. It is joined from parts so that this file, which
# students get, does not contain it.
CANARY = "-".join(("autograder", "hidden", "canary", "7d3e9a"))

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
SUITES_DIR = PACKAGE_DIR / "suites"


class AssignmentError(Exception):
    """An assignment name or configuration that cannot be used; the message says what to do."""


@dataclass
class Assignment:
    name: str
    title: str
    modules: list[dict]
    forbidden: list[str] = field(default_factory=list)
    timeout: float = 30.0
    limits: Limits = field(default_factory=Limits)
    submission_timeout: float = 900.0
    load_timeout: float = 60.0
    order: int = 100

    @property
    def suite_dir(self) -> Path:
        return SUITES_DIR / self.name

    @property
    def public_dir(self) -> Path:
        return self.suite_dir / "public"

    @property
    def hidden_dir(self) -> Path:
        return self.suite_dir / "hidden"

    @property
    def solution_dir(self) -> Path:
        return REPO_ROOT / "solutions" / self.name

    @property
    def skeleton_dir(self) -> Path:
        return REPO_ROOT / "assignments" / self.name

    @property
    def mutants_dir(self) -> Path:
        return REPO_ROOT / "tests" / "mutants" / self.name

    @property
    def expected_file(self) -> Path:
        """Recorded reference outputs for the public tests (lets students check without solutions)."""
        return self.public_dir / "expected.zip"

    @property
    def manual_file(self) -> Path:
        """The written questions (name, points, prompt) of the assignment's notebooks, made by the build."""
        return self.suite_dir / "manual.json"

    @property
    def files(self) -> list[str]:
        """The files a submission must contain."""
        return [m.get("notebook") or f"{m['name']}.py" for m in self.modules]

    @property
    def has_reference(self) -> bool:
        return all((self.solution_dir / f).is_file() for f in self.files)


def names() -> list[str]:
    """Every assignment with a suite, in course order when ``order`` is set in its toml."""
    found = [p.parent.name for p in SUITES_DIR.glob("*/assignment.toml")]
    return sorted(found, key=lambda n: (load(n).order, n))


def load(name: str) -> Assignment:
    path = SUITES_DIR / name / "assignment.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.parent.name for p in SUITES_DIR.glob("*/assignment.toml"))) or "none"
        raise AssignmentError(f"unknown assignment {name!r}; known assignments: {known}")
    try:
        config = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise AssignmentError(f"{path} is not valid TOML: {exc}") from None
    assignment = Assignment(
        name=name,
        title=config.get("title", name),
        modules=config["modules"],
        forbidden=config.get("forbidden", []),
        timeout=float(config.get("timeout", 30)),
        limits=Limits.from_config(config.get("limits", {})),
        submission_timeout=float(config.get("submission_timeout", 900)),
        load_timeout=float(config.get("load_timeout", 60)),
        order=int(config.get("order", 100)),
    )
    return assignment
