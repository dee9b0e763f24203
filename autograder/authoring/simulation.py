"""Gradescope's container, simulated: an autograder zip unpacked in a fresh ``/autograder`` look-alike and its
``run_autograder`` run as Gradescope runs it, as root, without namespaces, inside control groups limited to one of
Gradescope's sizes (``autograder.container.SIZES``).

The groups are made under this process's own, in the version 1 hierarchies (``memory``: the size's memory, swap
included; ``cpu``: the size's CPUs as a CFS quota), and ``run_autograder`` is started in them, so that everything it
starts is counted there; the grader's own groups (``autograder.sandbox.cgroups``) nest under them, so nothing escapes
the limit, as nothing escapes a container. The unified hierarchy puts the grader's groups at its root, outside these:
there the simulation refuses to run (``SimulationError``). Namespaces are off (``AUTOGRADER_NAMESPACES=0``: Gradescope's
Docker allows no mount namespaces), and so the grader runs one submission at a time under permissions, as there.

``simulate`` returns what ``tests/end_to_end/test_gradescope_container.py`` and ``bench/gradescope_sizes.py`` judge: the
results, the seconds from start to results, the groups' peak memory and whether the kernel killed anything for it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox import cgroups

PERIOD_US = 100_000  # the CFS period: a size's CPUs are its quota of each
_counter = itertools.count()


class SimulationError(Exception):
    """The simulated container cannot be made here (not root, or no version 1 memory and cpu hierarchies)."""


@dataclass
class Run:
    """One ``run_autograder`` in the simulated container."""

    results: dict  # results.json as written
    seconds: float  # from start to exit
    peak_mb: float  # the container's peak memory (the grader's own groups included), page cache included
    oom_kills: int  # processes the kernel killed for the container's memory (its own and its groups')
    stdout: str  # the autograder output, which Gradescope shows staff only
    returncode: int


def unpack(parent: Path, zip_path: Path, files: dict[str, str | bytes] | Path,
           metadata: dict | None = None) -> Path:
    """A fresh ``/autograder`` look-alike in ``parent``: ``source/`` (the unzipped autograder), ``run_autograder``,
    ``submission/`` holding ``files`` (or a copy of that folder), and Gradescope's ``submission_metadata.json`` when
    ``metadata`` is given."""
    root = Path(tempfile.mkdtemp(prefix="fake-autograder-", dir=parent))
    os.chmod(root, 0o755)  # like /autograder: traversable, so only the grader's own permissions protect it
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    os.chmod(root / "run_autograder", 0o755)
    if isinstance(files, Path):
        shutil.copytree(files, root / "submission")
        files = {}
    else:
        (root / "submission").mkdir()
    for name, content in files.items():
        path = root / "submission" / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    if metadata is not None:
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def _hierarchies() -> dict[str, Path]:
    """{controller: this process's group} in the version 1 memory and cpu hierarchies."""
    if os.geteuid() != 0:
        raise SimulationError("the simulated container needs root (its control groups)")
    own = cgroups.own_memory()
    parents = cgroups._parents()
    memory = own.folders["memory"] if own is not None else None
    if memory is None or not (memory / "memory.limit_in_bytes").exists() or "cpu" not in parents \
            or not (parents["cpu"] / "cpu.cfs_quota_us").exists():
        raise SimulationError("the simulated container needs the version 1 memory and cpu hierarchies (the unified "
                              "one puts the grader's own groups outside it)")
    return {"memory": memory, "cpu": parents["cpu"]}


@contextlib.contextmanager
def limited(cpus: float, memory_mb: int) -> Iterator[dict[str, Path]]:
    """Control groups limited to ``cpus`` and ``memory_mb`` (swap included), removed afterwards:
    {controller: folder}."""
    name = f"gradescope-sim-{os.getpid()}-{next(_counter)}"
    folders = {controller: parent / name for controller, parent in _hierarchies().items()}
    try:
        for folder in folders.values():
            folder.mkdir()
        memory = folders["memory"]
        (memory / "memory.limit_in_bytes").write_text(str(memory_mb << 20))
        if (memory / "memory.memsw.limit_in_bytes").exists():
            (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_mb << 20))
        (folders["cpu"] / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (folders["cpu"] / "cpu.cfs_quota_us").write_text(str(int(cpus * PERIOD_US)))
        yield folders
    finally:
        for folder in folders.values():
            _remove(folder)


def _remove(folder: Path) -> None:
    """Remove a group and what the grader left in it once it is empty (a worker's group goes with its worker)."""
    deadline = time.monotonic() + 10
    while folder.exists():
        with contextlib.suppress(OSError):
            for child in folder.iterdir():
                if child.is_dir():
                    _remove(child)
            folder.rmdir()
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)


def _oom_kills(folder: Path) -> int:
    """The kernel's kills in ``folder`` and every group below it (version 1 counts each group's own)."""
    kills = cgroups.Group({"memory": folder}).oom_kills()
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.is_dir():
                kills += _oom_kills(child)
    return kills


def simulate(root: Path, *, cpus: float, memory_mb: int, python: str, budget: int | None = None,
             env: dict[str, str] | None = None, timeout: float = 2700) -> Run:
    """Run ``root/run_autograder`` (``unpack``) in a container of ``cpus`` and ``memory_mb``, as root without
    namespaces, with ``python`` for the interpreter ``setup.sh`` installs and ``budget`` seconds (default: the
    zip's)."""
    environment = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_PYTHON": python,
                   "AUTOGRADER_NAMESPACES": "0", **(env or {})}
    environment.pop("AUTOGRADER_CGROUPS", None)  # the grader finds its own groups, nested in the container's
    if budget is not None:
        environment["AUTOGRADER_BUDGET"] = str(budget)
    with limited(cpus, memory_mb) as folders:
        procs = [str(folder / "cgroup.procs") for folder in folders.values()]

        def enter() -> None:  # in the child, before run_autograder starts: all it starts is counted in the container
            for path in procs:
                with open(path, "w") as handle:
                    handle.write("0")

        started = time.monotonic()
        process = subprocess.run([str(root / "run_autograder")], cwd=root, env=environment, capture_output=True,
                                 text=True, timeout=timeout, preexec_fn=enter)
        seconds = time.monotonic() - started
        memory = folders["memory"]
        peak = int((memory / "memory.max_usage_in_bytes").read_text()) / 2**20
        kills = _oom_kills(memory)
    results = json.loads((root / "results" / "results.json").read_text())
    return Run(results, seconds, peak, kills, process.stdout + process.stderr, process.returncode)
