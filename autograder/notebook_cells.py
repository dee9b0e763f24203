"""A notebook's code cells, read and run as a module: shared by the worker (a student's notebook) and the grader's
own process (the reference's notebook, loaded as a trusted implementation).

Cells run in order in one module namespace; a cell that raises is reported and the next one still runs, so one
broken demo cell does not hide the functions defined after it. IPython magics, shell escapes and Otter's check
calls are removed first (``notebook_cell_code``).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from types import ModuleType

PLACEHOLDER = "_Type your answer here, replacing this text._"  # a written answer's cell, as Otter builds it
ANSWER_TAG = "otter_answer_cell"  # the cells of a built notebook that students edit
MAX_BYTES = 20 << 20  # a notebook, or a code file, of a submission (``autograder.submission`` refuses larger ones)


class NotebookUnreadable(ValueError):
    """A submitted notebook file that is not a notebook (not JSON, or no list of cells), or too large or too deeply
    nested to read."""


def read_notebook(path: str) -> dict:
    """The notebook at ``path`` as JSON, or ``NotebookUnreadable`` with what to do about it: the one way a submitted
    notebook is read, by the worker and by the grader's side (its written answers, the static scan, the similarity
    check). Its size is checked before it is read (a notebook is parsed whole, and the parse takes several times the
    file's size); its nesting is bounded by ``json``'s own recursion limit, which raises ``RecursionError`` (the
    grader's process survives it: it stopped the runner only because nothing caught it)."""
    filename = os.path.basename(path)
    size = os.stat(path).st_size
    if size > MAX_BYTES:
        raise NotebookUnreadable(f"{filename} is {size / (1 << 20):.0f} MB, more than the {MAX_BYTES >> 20} MB a "
                                 "notebook may be: clear its outputs (in Jupyter, \"Clear All Outputs\"), save it "
                                 "and hand it in again.")
    try:
        with open(path, encoding="utf-8") as handle:
            notebook = json.load(handle)
    except RecursionError:
        raise NotebookUnreadable(f"{filename} is nested too deeply to be a notebook: hand in the notebook saved from "
                                 "Jupyter.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise NotebookUnreadable(
            f"{filename} is not a valid notebook file (it is not JSON{where}). Open it in Jupyter; if it does "
            "not open, take a backup copy that does, save it from Jupyter (never edit the .ipynb as text), "
            "and hand it in again.") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookUnreadable(f"{filename} is JSON but not a notebook (it has no list of cells): hand in the "
                                 "notebook saved from Jupyter.")
    return notebook


def run_notebook(name: str, path: str) -> tuple[ModuleType, list[str]]:
    """Execute a notebook's code cells, in order, as module ``name``; a failing cell is reported, not fatal.

    Plots go to matplotlib's non-interactive Agg backend and are closed after every cell, so
    ``plt.show()`` neither opens a window nor blocks, and figures do not pile up. ``display`` (a builtin
    in Jupyter) is a no-op here, so a cell that calls it still defines everything after the call.
    In an Otter Assign master (the reference), the cells between raw ``# BEGIN TESTS`` and ``# END TESTS``
    cells are Otter's tests, not the notebook's code: they are skipped, as they are absent from students' copies.
    """
    notebook = read_notebook(path)
    _headless_plots()
    module = ModuleType(name)
    module.__file__ = path
    module.display = _display
    sys.modules[name] = module
    filename, warnings_found, in_tests = os.path.basename(path), [], False
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if cell.get("cell_type") == "raw":
            marker = source.strip()
            in_tests = marker.startswith("# BEGIN TESTS") or in_tests and not marker.startswith("# END TESTS")
        if cell.get("cell_type") != "code" or in_tests:
            continue
        code = notebook_cell_code(source)
        if not code.strip():
            continue
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*non-interactive.*cannot be shown")
                exec(compile(code, f"<{filename} cell {number}>", "exec"), module.__dict__)
        except Exception as exc:  # noqa: BLE001 - later cells may still define what is graded
            warnings_found.append(f"cell {number} raised {type(exc).__name__}: {exc}")
        finally:
            pyplot = sys.modules.get("matplotlib.pyplot")
            if pyplot is not None:
                pyplot.close("all")
    return module, warnings_found


def _headless_plots() -> None:
    """Send matplotlib to the Agg backend, whether or not it is imported yet."""
    os.environ["MPLBACKEND"] = "Agg"
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")


def _display(*objects, **kwargs) -> None:
    """Jupyter's ``display``: nothing to show while grading."""


def notebook_cell_code(source: str) -> str:
    """Python code of a notebook cell: IPython magics, shell escapes and otter checks removed."""
    kept = []
    for line in source.splitlines():
        stripped = line.strip()
        if stripped.startswith(("%", "!")) or "otter" in stripped and "import" in stripped:
            kept.append("")
        elif stripped.startswith(("grader.check", "grader = otter", "grader.export")):
            kept.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            kept.append(line)
    return "\n".join(kept)
