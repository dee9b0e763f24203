"""The solution markers of ``solutions/``: what students write is marked ``# BEGIN SOLUTION`` ... ``# END SOLUTION``
(a region, its first line's hint after the marker) or ``# SOLUTION`` (one line). ``strip_solutions`` turns each into a
stub that raises ``NotImplementedError`` with the hint (the build's skeletons); ``marked_solution_lines`` and
``significant`` read the same markers back as the lines a student file must not contain (the leak scan, in ``.py``
files and in notebook cells alike)."""

from __future__ import annotations

import ast
import re

BEGIN = re.compile(r"^(?P<indent>\s*)# BEGIN SOLUTION\b:?\s*(?P<hint>.*)$")
END = re.compile(r"^\s*# END SOLUTION\s*$")
LINE = re.compile(r"^(?P<indent>\s*)(?P<code>\S.*?)\s*# SOLUTION\b:?\s*(?P<hint>.*)$")
SKIP = {"__pycache__", ".ipynb_checkpoints"}


class BuildError(Exception):
    """A solution file whose markers cannot be turned into a skeleton."""


def strip_solutions(source: str, filename: str) -> str:
    """The skeleton of one solution file (see the module docstring)."""
    owners = _enclosing_functions(source, filename)
    out, region = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        begin, end, single = BEGIN.match(line), END.match(line), LINE.match(line)
        if region is not None:
            if begin:
                raise BuildError(f"{filename}:{number}: BEGIN SOLUTION inside the region opened at line {region[0]}")
            if end:
                out.append(_stub(region[1], region[2], owners.get(region[0], "this part"), filename, region[0]))
                region = None
            continue
        if end:
            raise BuildError(f"{filename}:{number}: END SOLUTION without a BEGIN SOLUTION")
        if begin:
            region = (number, begin["indent"], begin["hint"].strip())
        elif single and not line.lstrip().startswith("#"):
            owner = owners.get(number, "this part")
            out.append(_stub(single["indent"], single["hint"].strip(), owner, filename, number))
        else:
            out.append(line)
    if region is not None:
        raise BuildError(f"{filename}:{region[0]}: BEGIN SOLUTION is never closed by END SOLUTION")
    skeleton = "\n".join(out) + ("\n" if source.endswith("\n") else "")
    try:
        ast.parse(skeleton)
    except SyntaxError as exc:
        raise BuildError(f"{filename}: the skeleton would not parse ({exc}); check the markers' indentation") from None
    return skeleton


def _stub(indent: str, hint: str, owner: str, filename: str, line: int) -> str:
    if not indent:
        raise BuildError(f"{filename}:{line}: solution regions must be inside a function or method")
    message = f"{owner}: {hint}" if hint else f"{owner} is not implemented yet"
    return f"{indent}raise NotImplementedError({message!r})"


def _enclosing_functions(source: str, filename: str) -> dict[int, str]:
    """Line number -> qualified name of the innermost function around it."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise BuildError(f"{filename}: the solution does not parse: {exc}") from None
    return enclosing_functions(tree)


def enclosing_functions(tree: ast.AST) -> dict[int, str]:
    """Line number -> qualified name of the innermost function around it, in a parsed module."""
    owners: dict[int, str] = {}

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                        owners[line] = name
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return owners


def marked_solution_lines(source: str) -> list[str]:
    """The lines inside ``# BEGIN/END SOLUTION`` markers and the code of ``# SOLUTION`` lines (cells or .py files)."""
    lines = source.splitlines()
    return [re.sub(r"\s*# SOLUTION.*$", "", lines[number - 1]) for number in solution_line_numbers(source)]


def solution_line_numbers(source: str) -> list[int]:
    """The numbers (from 1) of the lines students write: inside ``# BEGIN/END SOLUTION`` markers, and each
    ``# SOLUTION`` line (the lines ``autograder validate --mutate`` mutates)."""
    numbers, inside = [], False
    for number, line in enumerate(source.splitlines(), start=1):
        if re.match(r"\s*# BEGIN SOLUTION", line):
            inside = True
        elif re.match(r"\s*# END SOLUTION", line):
            inside = False
        elif inside or re.search(r"# SOLUTION\b", line):
            numbers.append(number)
    return numbers


def unmarked_lines(source: str) -> list[str]:
    marked = set(marked_solution_lines(source))
    return [line for line in source.splitlines() if line not in marked and "SOLUTION" not in line]


def significant(lines: list[str]) -> set[str]:
    """Lines long and specific enough that finding them in a student file means a leak."""
    out = set()
    for line in lines:
        text = line.strip()
        if len(text) >= 12 and not text.startswith("#") and text not in ("...", "pass", "return"):
            out.add(text)
    return out
