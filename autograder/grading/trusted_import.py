"""Loading trusted implementations (the reference, a mutant) into the grading process.

An implementation is a folder holding an assignment's files. ``load`` imports them as a
namespace with one attribute per module (``impl.masking``), the same shape as the ``student``
proxy, so a test can run one function over the student, the reference and every mutant. Module
names are borrowed in ``sys.modules`` only while importing, so the reference and several
mutants of the same file live side by side. A module carried from an earlier assignment is one of
the entries, so ``from masking import ...`` in a later module finds the folder's own copy.
Notebooks run with matplotlib's non-interactive backend and their printing discarded: a reference
notebook's plots and prints must not open windows or end up in the grader's output.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

from autograder.notebook_cells import run_notebook


def load(directory: Path, modules: list[dict], strict: bool = True, lazy: bool = False) -> SimpleNamespace:
    """Import every module of ``modules`` (assignment.toml entries) from ``directory``.

    A notebook cell that raises is an ``ImportError`` when ``strict`` (the reference must run cleanly);
    otherwise the cells after it still run (a mutant's plot may fail where its functions still answer).
    With ``lazy`` a notebook runs on first use (``directory`` must still exist then): notebooks plot, and
    most checks that consult a mutant never touch its notebook.
    """
    names = [m["name"] for m in modules]
    implementation = Implementation()
    with _importing(directory, names, {}):
        for entry in modules:
            if not entry.get("notebook"):
                setattr(implementation, entry["name"], importlib.import_module(entry["name"]))
    for entry in modules:
        if entry.get("notebook"):
            path, provide = Path(directory) / entry["notebook"], dict(vars(implementation))
            run = functools.partial(_notebook, entry["name"], path, strict, directory, names, provide)
            if lazy:
                implementation.defer(entry["name"], run)
            else:
                setattr(implementation, entry["name"], run())
    return implementation


class Implementation(SimpleNamespace):
    """Modules by name (``impl.masking``); a deferred notebook runs when first read."""

    def defer(self, name: str, run: Callable[[], ModuleType]) -> None:
        self.__dict__.setdefault("_deferred", {})[name] = run

    def hold(self, resource: object) -> None:
        """Keep ``resource`` (the temporary folder a deferred notebook lives in) as long as this object."""
        self.__dict__.setdefault("_held", []).append(resource)

    def __getattr__(self, name: str) -> ModuleType:
        run = self.__dict__.get("_deferred", {}).pop(name, None)
        if run is None:
            raise AttributeError(name)
        module = run()
        setattr(self, name, module)
        return module


def _notebook(name: str, path: Path, strict: bool, directory: Path, names: list[str],
              provide: dict[str, ModuleType]) -> ModuleType:
    """Run a notebook as module ``name``, its imports resolving to the implementation's own modules."""
    os.environ["MPLBACKEND"] = "Agg"
    with _importing(directory, names, provide), contextlib.redirect_stdout(io.StringIO()):
        module, errors = run_notebook(name, str(path))
    if errors and strict:
        raise ImportError(f"{path}: " + "; ".join(errors))
    return module


@contextlib.contextmanager
def _importing(directory: Path, names: list[str], provide: dict[str, ModuleType]) -> Iterator[None]:
    """Borrow ``names`` in ``sys.modules`` (holding ``provide``) and put ``directory`` first on the path."""
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    sys.modules.update(provide)
    importlib.invalidate_caches()
    sys.path.insert(0, str(directory))
    try:
        yield
    finally:
        sys.path.remove(str(directory))
        for name in names:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
