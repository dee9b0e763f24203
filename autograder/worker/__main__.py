"""``python -m autograder.worker``: read the spec, confine, set the traps, then serve until the grader hangs up.

``run`` is the same for a worker forked from a warm zygote (``autograder.worker.zygote``). The handshake on the reply
pipe: ``{"pid": N}`` (the worker as the grader sees it), then ``{"ready": true}`` once the worker is confined and can
import the submission (with ``cuda``, whether it can use the GPU, and ``memory``, the limits ``confine.bound_memory``
set: both found before any student file runs, so the grader may believe them), or ``{"ready": false, "error": ...}``
when the sandbox could not be set up (a grader problem). A probe (``spec["probe"]``) stops after the handshake and
reports what of the interpreter the confined worker cannot read, which of its own folders it cannot use, and the
Landlock ABI it enforced (0: none, or one that did not work). The doctor's worker (``spec["diagnose"]``,
``autograder.sandbox.doctor``) stops there too, with what it tried once confined (``autograder.worker.diagnose``).
"""

from __future__ import annotations

import argparse
import builtins
import os
import sys
import sysconfig
import tempfile
import warnings

from autograder import protocol
from autograder.worker import confine, diagnose
from autograder.worker.serve import Worker  # imported before confining: the harness's files are not readable after
from autograder.worker.traps import Traps

SANDBOX_USER = "student"  # the name a confined worker's libraries read for its uid (``_settle``)


def main() -> None:
    parser = argparse.ArgumentParser(description="autograder worker (started by the grader, not by hand)")
    parser.add_argument("--requests", type=int, required=True, help="file descriptor of the requests pipe")
    parser.add_argument("--replies", type=int, required=True, help="file descriptor of the replies pipe")
    options = parser.parse_args()
    run(options.requests, options.replies)


def run(requests: int, replies: int) -> None:
    """The worker's life on its two pipes (a started or a forked worker alike): spec, confinement, traps, calls."""
    spec, _ = protocol.read_frame(requests)
    paths = sysconfig.get_paths()
    interpreter = [os.path.realpath(sys.executable), paths["stdlib"], paths["purelib"]]
    try:
        view = confine.apply(spec["confine"], requests, replies)
    except (confine.ConfineError, OSError, KeyError, ValueError) as exc:
        protocol.write_frame(replies, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        os._exit(70)
    if spec.get("probe"):
        landlock = view["landlock"] if view["landlock"] and _denied("/") else 0
        protocol.write_frame(replies, {"ready": True, "unreadable": _unreadable(interpreter), "landlock": landlock,
                                       "unreachable": _unreachable([view["cwd"], view["tmp"]])})
        os._exit(0)
    _settle(view)
    if spec.get("diagnose"):
        protocol.write_frame(replies, {"ready": True, **diagnose.tries(spec["diagnose"], spec["confine"], view)})
        os._exit(0)

    import torch

    torch.set_num_threads(int(spec.get("threads", 1)))
    cuda = _cuda_usable(torch, view["gpu"].devices)
    traps = Traps(list(spec.get("forbidden", [])))
    sys.path.insert(0, view["cwd"])  # only now: no file of the submission can run before the traps are set
    worker = Worker(spec["modules"], traps, view["cwd"])
    try:
        # last: what its own imports hold is not the submission's
        bounds = confine.bound_memory(spec["confine"], view["gpu"].devices)
    except OSError as exc:
        protocol.write_frame(replies, {"ready": False, "error": f"could not bound the worker's memory: {exc}"})
        os._exit(70)
    protocol.write_frame(replies, {"ready": True, "cuda": cuda, "memory": bounds})
    while True:
        try:
            request, blobs = protocol.read_frame(requests)
        except protocol.PeerClosed:
            return
        reply, out_blobs = worker.handle(request, blobs)
        sys.stdout.flush()
        sys.stderr.flush()
        protocol.write_frame(replies, reply, out_blobs)


def _cuda_usable(torch, devices: tuple[str, ...]) -> bool:
    """Whether this confined worker can use the GPU, found before any student file runs (so the grader may believe
    it): where the sandbox keeps CUDA out, runtime tests run on the CPU rather than fail correct code. Asked only
    where the worker was granted NVIDIA's ``devices`` (found before it was confined: ``confine.apply``): starting CUDA
    takes time. Quietly: torch warns when CUDA fails to start, and the warning would read as the submission's
    output."""
    if not devices:
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.cuda.is_available()


def _settle(view: dict) -> None:
    """The confined worker's surroundings: its folders, no command-line arguments, no keyboard, and a name. A sandbox
    uid has no passwd entry (with namespaces the worker sees no /etc/passwd at all), and a library that asks
    ``getpwuid`` for it fails: torch 2.11 named its compile cache after the user, and a cold worker on an H100 lost 10
    lm points to ``getpwuid(): uid not found`` (then "Artifact of type=precompile already registered", the import
    half done). So ``getpass.getuser`` finds ``USER`` and ``LOGNAME``, and torch's and Triton's caches are named in its
    TMPDIR (a warm worker's zygote, which is not confined, may have named others, which the worker cannot write)."""
    tmp = view["tmp"]
    os.environ.update(HOME=view["cwd"], TMPDIR=tmp, MPLCONFIGDIR=os.path.join(tmp, "matplotlib"), USER=SANDBOX_USER,
                      LOGNAME=SANDBOX_USER, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "torchinductor"),
                      TRITON_CACHE_DIR=os.path.join(tmp, "triton"))
    tempfile.tempdir = None
    sys.argv = ["submission"]
    builtins.input = _no_input


def _unreadable(paths: list[str]) -> list[str]:
    """Those of the interpreter's ``paths`` this (confined) process cannot read: where permissions alone cannot
    run it."""
    return [path for path in paths if not os.access(path, os.R_OK | (os.X_OK if os.path.isdir(path) else 0))]


def _unreachable(folders: list[str]) -> list[str]:
    """Those of its own ``folders`` this (confined) process cannot use by their paths, as a worker imports and writes:
    the grader's temporary folder lies above them, and a sandbox uid must be able to pass through it."""
    return [path for path in folders if not os.access(path, os.R_OK | os.W_OK | os.X_OK)]


def _denied(path: str) -> bool:
    """Whether listing ``path``, which the allow-list leaves out, is refused: the Landlock layer at work."""
    try:
        os.listdir(path)
    except PermissionError:
        return True
    return False


def _no_input(*_args, **_kwargs):
    raise RuntimeError("input() is not available while grading: graded code must not wait for the keyboard")


if __name__ == "__main__":
    main()
