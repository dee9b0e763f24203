"""What a student hands in: the submission zip (``autograder zip``), written reproducibly.

``write_zip`` is also how the instructor's distributions are written (``autograder.authoring.dist``); it lives here
because the student copy of the harness, which ships ``zip`` but none of the instructor tools, needs it too.

``locate`` is where ``check`` and ``zip`` look for a student's files: students run them from inside their folder or
from the unzipped student folder above it, which also holds their virtual environment (thousands of files: staged as
a submission, it was "too large"). ``unfinished`` reads the student's own files as code, never running them: a
function that still raises ``NotImplementedError`` is a stub the skeleton left (the hidden references keep their
prompts in strings, so they have none). ``unfilled`` reads a notebook's answer cells the same way: a written answer
still holding Otter's placeholder, a choice still ``...``.
"""

from __future__ import annotations

import ast
import io
import re
import stat
import zipfile
from pathlib import Path

from autograder import course
from autograder.notebook_cells import ANSWER_TAG, PLACEHOLDER, NotebookUnreadable, notebook_cell_code, read_notebook

SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages", ".ipynb_checkpoints"})  # besides hidden folders
LOOKED_AT = 200  # entries of the folder given that are looked into for a student's files

ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class HandInError(Exception):
    """A submission that cannot be zipped from the folder given; the message says which files to add."""


def write_zip(files: dict[str, bytes], path: Path, executables: frozenset[str] = frozenset()) -> Path:
    """Write ``files`` as a reproducible zip: sorted, fixed timestamps, 0644 (0755 for the file names in
    ``executables``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            mode = 0o755 if Path(name).name in executables else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_bytes(buffer.getvalue())
    temp.replace(path)
    return path


def locate(name: str, folder: Path) -> Path:
    """The folder holding assignment ``name``'s files: ``folder`` itself, else the one folder directly in it that
    holds the assignment's own files (a carried file alone is an earlier assignment's folder; environments, caches and
    hidden folders are not looked into). ``HandInError`` says where they are not, and which folders hold them when
    several do."""
    assignment = course.load(name)

    def holds(path: Path, files: list[str]) -> bool:
        return any((path / file).is_file() for file in files)

    if holds(folder, assignment.files) or not folder.is_dir():
        return folder
    children = []
    for number, child in enumerate(sorted(folder.iterdir())):
        if number >= LOOKED_AT:
            break
        if (child.is_dir() and not child.is_symlink() and not child.name.startswith(".") and child.name not in SKIPPED
                and not (child / "pyvenv.cfg").exists() and holds(child, assignment.own_files)):
            children.append(child)
    if len(children) == 1:
        return children[0]
    found = f"; {', '.join(f'{c}/' for c in children)} hold them: give one" if children else (
        f"; give the folder that holds your {name} files (`autograder check {name} FOLDER`)")
    raise HandInError(f"no {', '.join(assignment.files)} in {folder}{found}")


def unfinished(name: str, folder: Path) -> list[str]:
    """The functions of assignment ``name``'s own files in ``folder`` that still raise ``NotImplementedError``
    (``file: function``); a file that does not parse, or a notebook cell, is read as far as it can be."""
    found = []
    for file in course.load(name).own_files:
        path = folder / file
        if not path.is_file():
            continue
        try:
            sources = ([notebook_cell_code("".join(cell.get("source") or [])) for cell in read_notebook(str(path))
                        ["cells"] if cell.get("cell_type") == "code"] if path.suffix == ".ipynb"
                       else [path.read_text(encoding="utf-8", errors="replace")])
        except (NotebookUnreadable, OSError, AttributeError, TypeError):
            continue
        for source in sources:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                continue
            found += [f"{file}: {node.name}" for node in ast.walk(tree)
                      if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _raises_not_implemented(node)]
    return list(dict.fromkeys(found))


def unfilled(name: str, folder: Path) -> list[str]:
    """The answer cells of assignment ``name``'s notebooks in ``folder`` still as the skeleton left them
    (``file: what``): a written answer that holds only Otter's placeholder, a variable still assigned ``...``. A
    written answer is named by the first line of its question, the cell before it."""
    found = []
    for file in course.load(name).own_files:
        path = folder / file
        if path.suffix != ".ipynb" or not path.is_file():
            continue
        try:
            notebook_cells = [cell for cell in read_notebook(str(path))["cells"] if isinstance(cell, dict)]
            sources = ["".join(cell.get("source") or []) for cell in notebook_cells]
            answers = [index for index, cell in enumerate(notebook_cells)
                       if ANSWER_TAG in (cell.get("metadata") or {}).get("tags", [])]
        except (NotebookUnreadable, OSError, AttributeError, TypeError):
            continue
        for index in answers:
            if notebook_cells[index].get("cell_type") == "markdown":
                if not sources[index].replace(PLACEHOLDER, "").strip():
                    found.append(f"{file}: the written answer to {_first_line(sources[index - 1]) if index else '?'}")
            else:
                found += [f"{file}: {variable} = ..." for variable in _still_ellipsis(sources[index])]
    return found


def _first_line(markdown: str) -> str:
    """The first line of a question's text, HTML comments and emphasis dropped, cut to 60 characters."""
    lines = [line.strip(" #*") for line in re.sub(r"<!--.*?-->", "", markdown, flags=re.DOTALL).splitlines()]
    line = next((line for line in lines if line), "?").replace("**", "")
    return f"{line[:57]}..." if len(line) > 60 else line


def _still_ellipsis(source: str) -> list[str]:
    """The names a cell's code assigns ``...`` to at its top level."""
    try:
        body = ast.parse(notebook_cell_code(source)).body
    except (SyntaxError, ValueError, RecursionError):
        return []
    names = []
    for node in body:
        if (isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant)
                and node.value.value is Ellipsis):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [target.id for target in targets if isinstance(target, ast.Name)]
    return names


def _raises_not_implemented(function: ast.AST) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                return True
    return False


def zip_path(name: str, out: Path | None = None) -> Path:
    """Where ``autograder zip`` writes a submission to ``name``: ``out``, by default ``NAME-submission.zip`` here."""
    return out or Path(f"{name}-submission.zip")


def pack_submission(name: str, folder: Path, out: Path | None = None, extra: list[Path] = ()) -> Path:
    """Zip exactly the files a submission to ``name`` needs, from ``folder``, plus the ``extra`` files asked
    for (a predictions file), all at the zip's top level; returns the zip written.

    Raises ``HandInError`` naming every missing file (and, for a carried one, where to copy it from).
    """
    assignment = course.load(name)
    missing = [f for f in assignment.files if not (folder / f).is_file()] + [str(p) for p in extra if not p.is_file()]
    if missing:
        hints = [f"copy your {f} from the {assignment.carried[f]} assignment into {folder}"
                 for f in missing if f in assignment.carried]
        raise HandInError(f"{folder} has no {', '.join(missing)}; a {name} submission holds "
                          f"{', '.join(assignment.files)}" + "".join(f"; {hint}" for hint in hints))
    target = zip_path(name, out)
    files = {f: (folder / f).read_bytes() for f in assignment.files} | {p.name: p.read_bytes() for p in extra}
    return write_zip(files, target)
