"""A system without Linux's layers, as the grader's own code meets it, simulated on Linux
(tests/sandbox/test_without_linux.py).

``simulate(log)`` takes from this process what macOS lacks, for the grader's code only (a module named
``autograder...`` asking, directly or through the standard library): no ``os.pidfd_open``; no ``prctl``, ``unshare``,
``mount``, ``madvise`` or ``malloc_trim`` in the C library (AttributeError, as ``dlsym`` fails there); nothing under
``/proc`` (FileNotFoundError). Libraries keep theirs (psutil and torch read ``/proc`` on Linux as they read the system
elsewhere). Each refusal is appended to ``log`` as ``pid what``, so a test sees what the grader tried.

Run as a script (``python -I -B not_linux.py LOG -m MODULE ARGS...``) it simulates, then runs ``MODULE`` as
``python -m`` would: the interpreter a simulated ``check`` starts its workers with (``wrapper``).
"""

from __future__ import annotations

import builtins
import ctypes
import io
import os
import runpy
import stat
import sys
from pathlib import Path

LINUX_ONLY = ("prctl", "unshare", "mount", "umount2", "madvise", "malloc_trim", "pidfd_open")
PASSED_THROUGH = ("builtins", "io", "_io", "os", "posixpath", "genericpath", "pathlib", "contextlib", "functools",
                  "codecs", "glob", "fnmatch", "shutil")


def simulate(log: str) -> None:
    def refuse(what: str, error: type[Exception]):
        with open(log, "a") as record:
            record.write(f"{os.getpid()} {what}\n")
        raise error(f"{what}: not on this system (tests/support/not_linux.py)")

    def graders() -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            spec = frame.f_globals.get("__spec__")  # a module run with -m is "__main__" by name, not by spec
            name = getattr(spec, "name", None) or frame.f_globals.get("__name__", "")
            if name == "autograder" or name.startswith("autograder."):
                return True
            if name.split(".")[0] not in PASSED_THROUGH and frame.f_code.co_filename != __file__:
                return False
            frame = frame.f_back
        return False

    def in_proc(path) -> bool:
        if isinstance(path, int):
            return False
        text = os.fsdecode(os.fspath(path))
        return text == "/proc" or text.startswith("/proc/")

    def guarded(original):
        def call(path=".", *args, **kwargs):
            if in_proc(path) and graders():
                refuse(str(path), FileNotFoundError)
            return original(path, *args, **kwargs)
        return call

    for module, name in ((builtins, "open"), (io, "open"), (os, "listdir"), (os, "scandir"), (os, "open")):
        setattr(module, name, guarded(getattr(module, name)))
    if hasattr(os, "pidfd_open"):
        del os.pidfd_open
    symbol = ctypes.CDLL.__getattr__

    def lookup(library, name):
        if name in LINUX_ONLY and graders():
            refuse(name, AttributeError)
        return symbol(library, name)

    ctypes.CDLL.__getattr__ = lookup


def wrapper(folder: Path, log: Path) -> Path:
    """An executable in ``folder`` that runs Python under ``simulate(log)``: a simulated ``check``'s ``sys.executable``,
    with which it starts each worker (``python -I -B -m autograder.worker ...``)."""
    path = folder / "python-not-linux"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -I -B "{__file__}" "{log}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


if __name__ == "__main__":
    log, *arguments = sys.argv[1:]
    while arguments and arguments[0] in ("-I", "-B"):
        arguments.pop(0)
    if arguments[:1] != ["-m"]:
        raise SystemExit("usage: not_linux.py LOG [-I] [-B] -m MODULE ARGS...")
    simulate(log)
    sys.argv = [arguments[1], *arguments[2:]]
    runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
