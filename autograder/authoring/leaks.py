"""The leak scan: what a student distribution must never contain, and the check that refuses it.

Secrets are collected from the whole repository, not only from the assignments a zip is for (a later
assignment's solution pasted into an earlier skeleton leaks too):

- the canary line every hidden file carries (``assignment.CANARY``), searched in raw bytes and inside
  nested zips (``expected.zip``);
- every significant line of a solution: ``# BEGIN/END SOLUTION`` regions and ``# SOLUTION`` lines of
  ``solutions/**/*.py`` (the marker parsing of ``markers.marked_solution_lines``), and the solution
  blocks and hidden tests of master notebooks (``notebooks.secret_lines``), which is how code that Otter
  copied out of a misplaced solution block is caught;
- the name of every hidden test function that no public test shares;
- any path under a hidden folder (``hidden/``, ``solutions/``, ``mutants/``, ``private/``) or a file
  named ``SECRET``: instructor-only data (a generated world's test labels) belongs in such a folder;
- a copy, under any name, of a file from a hidden suite folder or of a mutant (data files carry no canary).

Lines are compared with whitespace collapsed and must match at token boundaries, so a re-indented copy
is found and ``x = a + b`` is not found inside ``xx = a + bb``. What the generated skeletons show (given
code that a solution also contains, a hint that spells out a line) is not secret; it is computed from
``solutions/`` again (``markers.strip_solutions``), never read from ``assignments/``, so a stale skeleton
cannot excuse a leak. Lines made only of names, dots, commas, colons and ``=`` (``B, T, D = x.shape``,
``for block in self.blocks:``) reveal nothing and turn up in independent code, so they are not secrets.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.authoring import markers, notebooks
from autograder.authoring.markers import SKIP, strip_solutions
from autograder.course import CANARY, REPO_ROOT, SUITES_DIR

HIDDEN_FOLDERS = frozenset({"hidden", "solutions", "mutants", "private"})
SECRET_FILES = frozenset({"SECRET"})
MAX_NESTING = 3
IDENTIFIER = re.compile(r"\w")
MIN_COPY_BYTES = 64  # shorter hidden files (empty __init__.py) say nothing
PLUMBING = re.compile(r"[\w\s.,:=]*")


@dataclass(frozen=True)
class Leak:
    """One finding: the file inside the distribution and why it must not ship."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class LeakError(Exception):
    """A distribution that would leak hidden material; nothing was written."""

    def __init__(self, target: str, leaks: list[Leak]):
        self.target, self.leaks = target, leaks
        shown = "\n".join(f"  - {leak}" for leak in leaks[:50])
        more = f"\n  ... and {len(leaks) - 50} more" if len(leaks) > 50 else ""
        super().__init__(f"refusing to write {target}: {len(leaks)} finding(s) of hidden material\n{shown}{more}\n"
                         "Remove the file from the distribution, or put the line inside a solution region in "
                         "solutions/ and run `autograder build`; then build the distribution again.")


@dataclass
class Secrets:
    """What must not ship, each with where it comes from: normalised solution lines, hidden test names, and
    the SHA-256 of hidden files."""

    lines: dict[str, str] = field(default_factory=dict)
    test_names: dict[str, str] = field(default_factory=dict)
    copies: dict[str, str] = field(default_factory=dict)
    canary: str = CANARY

    def add_lines(self, lines: set[str] | list[str], origin: str) -> None:
        for line in map(normalise, lines):
            if not PLUMBING.fullmatch(line):
                self.lines.setdefault(line, origin)

    def add_python(self, source: str, origin: str) -> str:
        """The solution lines of a ``solutions/**/*.py`` file; returns its skeleton text (normalised)."""
        self.add_lines(markers.significant(markers.marked_solution_lines(source)), origin)
        return normalise(strip_solutions(source, origin))

    def drop_shown(self, skeletons: list[str]) -> None:
        """Forget every line that a skeleton (normalised text) shows students anyway."""
        for line in [line for line in self.lines if any(_contains(text, line) for text in skeletons)]:
            del self.lines[line]

    def add_hidden_file(self, path: Path) -> None:
        """Remember a hidden file's content, so a copy of it under another name is found."""
        data = path.read_bytes()
        if len(data) >= MIN_COPY_BYTES:
            self.copies.setdefault(hashlib.sha256(data).hexdigest(), _relative(path))

    def add_notebook(self, master: Path) -> None:
        """The solution and hidden-test lines of an Otter master notebook."""
        self.add_lines(notebooks.secret_lines(master), _relative(master))

    @classmethod
    def of_notebook(cls, master: Path) -> Secrets:
        """One master notebook's secrets alone: what the build checks the student notebook it made against."""
        secrets = cls()
        secrets.add_notebook(master)
        return secrets

    def add_hidden_tests(self, path: Path, public_names: set[str] = frozenset()) -> None:
        """The test functions defined in a hidden test file (except names a public test also uses)."""
        for name in defined_tests(path) - public_names:
            self.test_names.setdefault(name, _relative(path))


def normalise(text: str) -> str:
    """``text`` with every run of whitespace collapsed to one space."""
    return " ".join(text.split())


def defined_tests(path: Path) -> set[str]:
    """Names of the ``test*`` functions defined anywhere in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")}


def collect() -> Secrets:
    """Every secret of the repository (see the module docstring)."""
    secrets = Secrets()
    solutions = REPO_ROOT / "solutions"
    skeletons = [secrets.add_python(path.read_text(encoding="utf-8"), _relative(path))
                 for path in _files(solutions, ".py")]
    for master in _files(solutions, ".ipynb"):
        secrets.add_notebook(master)
    secrets.drop_shown(skeletons)
    suites = {path: path.relative_to(SUITES_DIR).parts for path in _files(SUITES_DIR, "")}
    public_names = set().union(*(defined_tests(p) for p, parts in suites.items()
                                 if "public" in parts and p.suffix == ".py"))
    for path, parts in suites.items():
        if "hidden" in parts and path.suffix == ".py":
            secrets.add_hidden_tests(path, public_names)
    hidden_files = [path for path, parts in suites.items() if "hidden" in parts]
    for path in [*hidden_files, *_files(REPO_ROOT / "tests" / "mutants", "")]:
        secrets.add_hidden_file(path)
    return secrets


def _files(root: Path, suffix: str) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob(f"*{suffix}") if p.is_file() and not SKIP & set(p.relative_to(root).parts))


def _relative(path: Path) -> str:
    path = Path(path)
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def scan(files: Mapping[str, bytes], secrets: Secrets) -> list[Leak]:
    """Every leak in a distribution given as ``{path inside the zip: content}``, in path order."""
    pattern = None
    if secrets.test_names:
        names = sorted(secrets.test_names, key=len, reverse=True)
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    found: list[Leak] = []
    for path in sorted(files):
        found += _scan_file(path, files[path], secrets, pattern, 0)
    return found


def scan_zip(path: Path, secrets: Secrets) -> list[Leak]:
    """Every leak in a zip file on disk."""
    with zipfile.ZipFile(path) as archive:
        return scan({name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}, secrets)


def _scan_file(path: str, data: bytes, secrets: Secrets, pattern: re.Pattern | None, depth: int) -> list[Leak]:
    found = []
    parts = PurePosixPath(path).parts
    hidden = sorted(HIDDEN_FOLDERS & set(parts[:-1]))
    if hidden:
        found.append(Leak(path, f"is under a hidden folder ({', '.join(f'{h}/' for h in hidden)})"))
    if parts and parts[-1] in SECRET_FILES:
        found.append(Leak(path, "is a SECRET file (the hidden seed)"))
    if secrets.canary.encode() in data:
        found.append(Leak(path, "carries the hidden-file canary (copied from a hidden test or a mutant?)"))
    copied = secrets.copies.get(hashlib.sha256(data).hexdigest()) if len(data) >= MIN_COPY_BYTES else None
    if copied:
        found.append(Leak(path, f"is a copy of the hidden file {copied}"))
    if path.lower().endswith(".zip") and depth < MAX_NESTING:
        found += _scan_nested(path, data, secrets, pattern, depth)
    text = _text(path, data)
    if text is None:
        return found
    flat = normalise(text)
    for line, origin in secrets.lines.items():
        if _contains(flat, line):
            found.append(Leak(path, f"contains a line of the solution in {origin}: {line!r}"))
    if pattern is not None:
        for name in sorted(set(pattern.findall(text))):
            found.append(Leak(path, f"names the hidden test {name} (defined in {secrets.test_names[name]})"))
    return found


def _scan_nested(path: str, data: bytes, secrets: Secrets, pattern, depth: int) -> list[Leak]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [(name, archive.read(name)) for name in archive.namelist() if not name.endswith("/")]
    except (zipfile.BadZipFile, OSError, ValueError):
        return [Leak(path, "is a .zip that cannot be read, so it cannot be checked")]
    return [leak for name, member in members
            for leak in _scan_file(f"{path}/{name}", member, secrets, pattern, depth + 1)]


def _text(path: str, data: bytes) -> str | None:
    """The text a reader sees: cell sources and embedded tests for notebooks, UTF-8 text, or None (binary)."""
    if path.endswith(".ipynb"):
        try:
            return notebooks.notebook_text(data)
        except (ValueError, TypeError, AttributeError):
            pass  # not a readable notebook: scan it as plain text
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _contains(text: str, line: str) -> bool:
    """Whether ``line`` occurs in ``text`` without identifier characters glued to either end."""
    start = text.find(line)
    while start != -1:
        end = start + len(line)
        before = start == 0 or not (IDENTIFIER.match(text[start - 1]) and IDENTIFIER.match(line[0]))
        after = end == len(text) or not (IDENTIFIER.match(text[end]) and IDENTIFIER.match(line[-1]))
        if before and after:
            return True
        start = text.find(line, start + 1)
    return False
