"""How workers are configured: an assignment's ``Limits``, and the environment variables that choose the isolation
or carry what a batch found to its runners (``autograder.sandbox.isolation``)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

COLD_ENV = "AUTOGRADER_COLD"  # "1": start every runner and worker as a new interpreter (to compare with warm)
NAMESPACES_ENV = "AUTOGRADER_NAMESPACES"  # "0": no namespaces; "1": a probe found them
LANDLOCK_ENV = "AUTOGRADER_LANDLOCK"  # "0": no Landlock layer; N: a probe found Landlock ABI N
SECCOMP_ENV = "AUTOGRADER_SECCOMP"  # "0": no system-call filter; "1": the grader found libseccomp
LOCK_ENV = "AUTOGRADER_LOCK_FILES"  # "1": as root without namespaces or Landlock, make what the grader holds root-only
LINUX_ENV = "AUTOGRADER_LINUX"  # "0": a test aid, read by `check` alone: grade as on a system without Linux's layers
PROBE = -1  # Isolation.landlock while it is being probed: apply what the kernel offers and say what


def linux() -> bool:
    """Whether this system is Linux, whose layers the sandbox uses where present (``autograder.sandbox.isolation``)."""
    return sys.platform.startswith("linux")


def without_linux_asked() -> bool:
    """Whether ``AUTOGRADER_LINUX=0`` asks a student's ``check`` to grade as macOS would: without namespaces, Landlock,
    the system-call filter, control groups, ``prctl``, ``/proc`` or warm starts, its memory watched from outside. A
    test aid, so that a Linux machine exercises the path other systems take; it can only weaken the grading of one's
    own code, and only ``check`` reads it (a submission never sets the grader's environment: a worker's is a fixed
    list, ``Sandbox._environment``)."""
    return os.environ.get(LINUX_ENV) == "0"


@dataclass
class Limits:
    """Resource limits for one worker (see the module docstring). An assignment states every one of them in its
    ``[limits]`` (``from_config`` refuses a partial table), so that its toml says what applies; these defaults serve
    the workers that belong to no assignment (the isolation probe, the harness's own tests)."""

    memory_mb: int = 6144
    cpu_seconds: int = 900
    processes: int = 256
    file_size_mb: int = 64
    open_files: int = 512
    output_bytes: int = 256 * 1024
    threads: int = 1
    tmp_mb: int = 256  # each of /tmp and /dev/shm, where namespaces give the worker its own; what it writes to disk

    @classmethod
    def from_config(cls, config: dict) -> Limits:
        unknown = set(config) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown limit(s) {sorted(unknown)}; known: {sorted(cls.__dataclass_fields__)}")
        missing = [name for name in cls.__dataclass_fields__ if name not in config]
        if missing:
            raise ValueError(f"[limits] must state every limit; add {', '.join(missing)} (the usual values: "
                             + ", ".join(f"{name} = {getattr(cls(), name)}" for name in missing) + ")")
        return cls(**config)



