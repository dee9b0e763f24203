"""The course's assignments: where each one's pieces live, and its ``assignment.toml``.

Each assignment ``NAME`` has ``solutions/NAME/`` (reference), ``assignments/NAME/`` (generated
skeleton), ``autograder/suites/NAME/`` (``assignment.toml``, ``public/`` tests that ship to
students, ``hidden/`` tests that never do) and ``tests/mutants/NAME/`` (known-wrong versions).
New assignments are picked up by adding those folders: nothing here lists them by name, and nothing in the core
imports an assignment's own modules (its helpers live in its suite folder; the subcommands it adds to ``autograder``
are declared in its toml, ``add_commands``). ``autograder new`` scaffolds one; docs/authoring.md explains each part.

A later assignment can build on an earlier one's module: ``{ name = "masking", carried = "masking" }``
in ``modules`` declares ``masking.py`` as *carried*, the student's own copy of the masking assignment's
file, handed in again with this submission. It is a required file like any other (``files``), but it is
not this assignment's own work: mutants target only ``own_files``, batch detection decides by them, and
a missing carried file gets a message naming the assignment it comes from. In ``solutions/NAME/`` it is
a relative link to the earlier solution, so the build generates its skeleton from the same source.
"""

from __future__ import annotations

import argparse
import copy
import functools
import hashlib
import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10, where students may run check: the backport, required there
    import tomli as tomllib

from autograder.sandbox.config import Limits

# Every file that must never reach students (hidden tests, mutants) carries this line, so a
# distribution can be refused when one slips in. It is joined from parts so that this file, which
# students get, does not contain it.
CANARY = "-".join(("autograder", "hidden", "canary", "7d3e9a"))

# The term's hidden seed, when set, overrides each suite's committed ``hidden/SECRET``.
SECRET_ENV = "AUTOGRADER_SECRET"

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
SUITES_DIR = PACKAGE_DIR / "suites"


class AssignmentError(Exception):
    """An assignment name or configuration that cannot be used; the message says what to do."""


def module_file(entry: dict) -> str:
    """The file a module entry of ``assignment.toml`` stands for (``masking.py``, ``positions.ipynb``)."""
    return entry.get("notebook") or f"{entry['name']}.py"


@dataclass
class Assignment:
    """One assignment's configuration; ``modules`` are the ``assignment.toml`` entries, in import order, ``commands``
    its subcommands (``add_commands``) and ``settings`` the whole toml as read, where an assignment's own tables
    (lm: ``[worlds]``, ``[retraining]``) are found by its suite."""

    name: str
    title: str
    modules: list[dict]
    forbidden: list[str] = field(default_factory=list)
    timeout: float = 30.0
    limits: Limits = field(default_factory=Limits)
    submission_timeout: float = 900.0
    load_timeout: float = 60.0
    order: int = 100
    commands: dict[str, str] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    gpu_tags: list[str] = field(default_factory=list)  # tests with these tags run on a GPU where the grader has one

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
        """The files a submission must contain: its own and the carried ones."""
        return [module_file(m) for m in self.modules]

    @property
    def own_files(self) -> list[str]:
        """The files students write for this assignment (not carried from an earlier one)."""
        return [module_file(m) for m in self.modules if not m.get("carried")]

    @property
    def notebooks(self) -> list[str]:
        """The notebooks a submission holds (``positions.ipynb``): the modules handed in as notebooks."""
        return [m["notebook"] for m in self.modules if m.get("notebook")]

    @property
    def carried(self) -> dict[str, str]:
        """Carried file -> the earlier assignment it comes from (``{"masking.py": "masking"}``)."""
        return {module_file(m): m["carried"] for m in self.modules if m.get("carried")}

    def recording_fingerprint(self) -> str:
        """A hash of what the public tests' recorded values come from: the reference's files, the suite's code
        outside ``hidden/``, and the mutants (this assignment's and those of the assignments it carries from)."""
        digest = hashlib.sha256()
        mutants = [self.mutants_dir, *(REPO_ROOT / "tests" / "mutants" / name for name in self.carried.values())]
        suite = [p for p in sorted(self.suite_dir.rglob("*.py")) if "hidden" not in p.relative_to(self.suite_dir).parts]
        sources = [*(self.solution_dir / name for name in self.files), *suite,
                   *(p for folder in mutants for p in sorted(folder.glob("*.py")))]
        for path in sources:
            digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()

    @property
    def has_reference(self) -> bool:
        return all(_visible_file(self.solution_dir / f) for f in self.files)

    @property
    def committed_secret(self) -> str:
        """The hidden seed committed in ``hidden/SECRET`` ("" without one)."""
        path = self.hidden_dir / "SECRET"
        return path.read_text().strip() if _visible_file(path) else ""

    @property
    def secret(self) -> str:
        """The term's hidden seed: ``AUTOGRADER_SECRET`` when set, else the committed one."""
        return os.environ.get(SECRET_ENV, self.committed_secret)


def add_commands(command: Callable[[str, str, str], argparse.ArgumentParser],
                 taken: Iterable[str]) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Add every assignment's declared subcommands (``[commands]`` in its toml: ``NAME = "module:function"``) with
    ``command(NAME, summary, example)``, which makes a subcommand's parser (the ``taken`` names exist already);
    returns NAME -> handler. The function receives the subcommand's parser, adds its options and returns the handler,
    which gets the parsed options and returns the exit status; its docstring's first line is the subcommand's
    summary, and a line ``Example: ...`` its example."""
    handlers: dict[str, Callable[[argparse.Namespace], int]] = {}
    make = command
    for name in names():
        for command, target in load(name).commands.items():
            if command in handlers or command in taken:
                raise AssignmentError(f"{SUITES_DIR / name / 'assignment.toml'}: [commands] {command} is taken "
                                      f"(by autograder itself or another assignment); give it another name")
            module_name, _, function_name = target.partition(":")
            try:
                setup = getattr(importlib.import_module(module_name), function_name)
            except (ImportError, AttributeError) as exc:
                raise AssignmentError(f"{SUITES_DIR / name / 'assignment.toml'}: [commands] {command} = {target!r} "
                                      f"cannot be loaded ({exc}); write it as \"package.module:function\"") from None
            lines = (setup.__doc__ or command).strip().splitlines()
            example = next((line.strip().removeprefix("Example:").strip() for line in lines
                            if line.strip().startswith("Example:")), f"autograder {command} --help")
            handlers[command] = setup(make(command, lines[0], example))
    return handlers


def names() -> list[str]:
    """Every assignment with a suite, in course order when ``order`` is set in its toml."""
    found = [p.parent.name for p in SUITES_DIR.glob("*/assignment.toml")]
    return sorted(found, key=lambda n: (load(n).order, n))


def load(name: str) -> Assignment:
    path = SUITES_DIR / name / "assignment.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.parent.name for p in SUITES_DIR.glob("*/assignment.toml"))) or "none"
        raise AssignmentError(f"unknown assignment {name!r}; known assignments: {known}")
    config = read_toml(path)
    modules = config.get("modules")
    if not isinstance(modules, list) or not modules or not all(isinstance(m, dict) and "name" in m for m in modules):
        raise AssignmentError(f"{path}: `modules` must list the submitted modules, "
                              f"e.g. modules = [{{ name = \"{name}\" }}]")
    for entry in modules:
        if entry.get("carried"):
            _check_carried(path, entry)
    commands = config.get("commands", {})
    if not all(isinstance(t, str) and ":" in t for t in commands.values()):
        raise AssignmentError(f"{path}: [commands] maps a new subcommand's name to \"package.module:function\", "
                              f"e.g. world = \"autograder.suites.{name}.world:subcommand\"")
    assignment = Assignment(
        name=name,
        title=config.get("title", name),
        modules=modules,
        forbidden=config.get("forbidden", []),
        timeout=float(config.get("timeout", 30)),
        limits=_limits(path, config.get("limits", {})),
        submission_timeout=float(config.get("submission_timeout", 900)),
        load_timeout=float(config.get("load_timeout", 60)),
        order=int(config.get("order", 100)),
        commands=commands,
        settings=config,
        gpu_tags=list(config.get("gpu_tags", [])),
    )
    return assignment


def _visible_file(path: Path) -> bool:
    """Whether ``path`` is a file this user can see: not where a folder on the way is closed to it (course staff who
    keep ``solutions/`` or ``hidden/`` from a TA's account, who then checks as a student does), as not where it is
    absent."""
    try:
        return path.is_file()
    except PermissionError:
        return False


def _limits(path: Path, config: dict) -> Limits:
    try:
        return Limits.from_config(config)
    except ValueError as exc:
        raise AssignmentError(f"{path}: {exc}") from None


def read_toml(path: Path) -> dict:
    """``path`` read as TOML (``tomllib``, or its backport on Python 3.10), parsed once per version of the file (a copy
    each time: callers keep and may change it); ``AssignmentError`` when it is not TOML. Discovery asks for every
    assignment per submission it looks at, and a parse takes milliseconds: unparsed, finding the 500 submissions of an
    export took 37 s."""
    try:
        found = path.stat()
        return copy.deepcopy(_parsed(path, found.st_mtime_ns, found.st_size))
    except tomllib.TOMLDecodeError as exc:
        raise AssignmentError(f"{path} is not valid TOML: {exc}") from None


@functools.lru_cache(maxsize=64)
def _parsed(path: Path, modified: int, size: int) -> dict:
    return tomllib.loads(path.read_text())


def _check_carried(path: Path, entry: dict) -> None:
    """A carried module must be one of the source assignment's own modules (read without recursion)."""
    source = str(entry["carried"])
    source_toml = SUITES_DIR / source / "assignment.toml"
    if not source_toml.is_file():
        raise AssignmentError(f"{path}: module {entry['name']!r} is carried from {source!r}, which is not an "
                              "assignment; name the assignment whose suite folder holds that module")
    own = [m.get("name") for m in read_toml(source_toml).get("modules", []) if not m.get("carried")]
    if entry["name"] not in own:
        raise AssignmentError(f"{path}: module {entry['name']!r} is carried from {source!r}, but {source!r} does not "
                              f"have it among its own modules ({', '.join(map(str, own)) or 'none'})")
