"""What the benchmark scripts share: importing an LM implementation, the environment line, timing load.

An implementation is a folder holding dataset.py, model.py, trainer.py, run.py (and the carried
masking.py, positions.py): the reference ``solutions/lm`` by default, or a student's submission.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from types import SimpleNamespace

import torch

from autograder import course

REFERENCE = course.REPO_ROOT / "solutions" / "lm"


def load_implementation(folder: Path = REFERENCE) -> SimpleNamespace:
    """The LM modules of ``folder`` (``impl.run``, ``impl.model``, ...), imported as the grader imports them."""
    lm = course.load("lm")
    missing = [name for name in lm.files if not (Path(folder) / name).is_file()]
    if missing:
        raise SystemExit(f"{folder} lacks {', '.join(missing)}: point --solution at a complete lm folder")
    from autograder.grading import trusted_import  # an instructor's module: bench/check.py runs on a student's copy too

    return trusted_import.load(Path(folder), lm.modules)


def environment() -> str:
    """One line saying where the figures were measured (load average included: timings on a busy machine are noisy)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"{os.cpu_count()} CPU cores"
    malloc = {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")}
    return (f"torch {torch.__version__}, {device}, {torch.get_num_threads()} threads, "
            f"python {platform.python_version()}, load {load:.2f}" + (f", {malloc}" if malloc else ""))
