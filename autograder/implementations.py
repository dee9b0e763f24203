"""Loading trusted implementations (the reference, a mutant) into the grading process.

An implementation is a folder holding an assignment's files. ``load`` imports them as a
namespace with one attribute per module (``impl.masking``), the same shape as the ``student``
proxy, so a test can run one function over the student, the reference and every mutant. Module
names are borrowed in ``sys.modules`` only while importing, so the reference and several
mutants of the same file live side by side.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import SimpleNamespace

from autograder.worker import run_notebook


def load(directory: Path, modules: list[dict]) -> SimpleNamespace:
    """Import every module of ``modules`` (assignment.toml entries) from ``directory``."""
    names = [m["name"] for m in modules]
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    importlib.invalidate_caches()
    sys.path.insert(0, str(directory))
    try:
        loaded = {}
        for entry in modules:
            if entry.get("notebook"):
                module, errors = run_notebook(entry["name"], str(Path(directory) / entry["notebook"]))
                if errors:
                    raise ImportError(f"{directory / entry['notebook']}: " + "; ".join(errors))
                loaded[entry["name"]] = module
            else:
                loaded[entry["name"]] = importlib.import_module(entry["name"])
        return SimpleNamespace(**loaded)
    finally:
        sys.path.remove(str(directory))
        for name in names:
            sys.modules.pop(name, None)
        sys.modules.update(saved)
