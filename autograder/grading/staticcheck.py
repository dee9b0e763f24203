"""Static scan of a submission for library routines the assignment forbids.

Forbidden names come from ``assignment.toml`` as dotted paths
(``torch.nn.functional.scaled_dot_product_attention``). The scan flags attribute access to the
last component on anything but ``self`` (``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``),
``from torch... import NAME``, and ``getattr(obj, "NAME")``; a student's own function that shares
the name is not flagged. Each finding is filed under the top-level function or class that holds
it (``<module>`` for top-level code), so only the tests covering that symbol lose points. The
worker traps the same routines at run time, which catches what a static scan cannot see.

The scan runs in the trusted runner, and a syntax tree takes hundreds of times the memory of its code: a 6 MB file
(within the size a code file may have) took the runner to 1.83 GB, past its ceiling, and out of the scan (issue
41). So a file with more than ``MAX_PARSED`` bytes of code (a notebook: its code cells together) is not parsed, nor one
the parser gives up on for memory or depth: it is filed under ``UNCHECKED``, and every test that covers a symbol fails
(closed: a file the scan could not read may hold anything), saying why.
"""

from __future__ import annotations

import ast
from pathlib import Path

MODULE_LEVEL = "<module>"
UNCHECKED = "<unchecked>"  # the files the scan could not read, which cost every covering test its points
# Bytes of code parsed per file: 20 times the largest reference file (25 KB); a syntax tree of that much code takes
# about 200 MB (400 times the code, for short lines), and the 6 MB file of issue 41 would take 2.5 GB.
MAX_PARSED = 512 << 10


def scan(root: Path, files: list[str], forbidden: list[str]) -> dict[str, list[str]]:
    """``{symbol: [finding, ...]}`` for every forbidden use in ``files`` under ``root``."""
    names = {dotted.rsplit(".", 1)[-1]: dotted for dotted in forbidden}
    findings: dict[str, list[str]] = {}
    if not names:
        return findings
    for filename in files:
        path = root / filename
        sources = _sources(path)
        size = sum(len(source.encode("utf-8", "replace")) for _, source in sources)
        if size > MAX_PARSED:
            findings.setdefault(UNCHECKED, []).append(
                f"{filename} holds {size >> 10} KB of code, more than the {MAX_PARSED >> 10} KB the grader reads to "
                "check it: keep data in files of its own, not in the code")
            continue
        for label, source in sources:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                continue  # the import in the worker reports syntax errors with context
            except (RecursionError, MemoryError):
                findings.setdefault(UNCHECKED, []).append(f"{label} is nested too deeply for the grader to check it")
                continue
            for symbol, node, name in _uses(tree, names):
                findings.setdefault(symbol, []).append(f"{label}, line {node.lineno}: uses {names[name]}")
    return findings


def _sources(path: Path) -> list[tuple[str, str]]:
    if not path.is_file():
        return []
    if path.suffix != ".ipynb":
        return [(path.name, path.read_text(encoding="utf-8", errors="replace"))]
    from autograder.notebook_cells import NotebookUnreadable, notebook_cell_code, read_notebook

    try:
        cells = read_notebook(str(path))["cells"]
    except NotebookUnreadable:
        return []  # the worker says why, as it loads the notebook
    out = []
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            out.append((f"{path.name} cell {number}", notebook_cell_code(source)))
    return out


def _uses(tree: ast.Module, names: dict[str, str]):
    for top in tree.body:
        symbol = top.name if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else MODULE_LEVEL
        for node in ast.walk(top):
            if isinstance(node, ast.Attribute) and node.attr in names:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                    yield symbol, node, node.attr
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
                for alias in node.names:
                    if alias.name in names:
                        yield symbol, node, alias.name
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and node.args[1].value in names):
                yield symbol, node, node.args[1].value
