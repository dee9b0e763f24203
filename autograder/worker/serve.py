"""Serving the grader's calls: the submission's modules, the objects the grader holds by handle, the answers.

Requests (``op``): ``load`` (import every module of the submission; a notebook runs cell by cell), ``call`` (a
function, class, method or attribute path, with arguments), ``getattr``, ``grad`` (forward and backward through a
module or function), ``trim`` (return free heap memory to the system, so that the grader's memory readings start
clean), ``seed``, ``release``. A ``call`` with ``"inputs": true`` answers ``{"output", "args", "kwargs"}``, the
arguments as the call left them, so that the grader can see a caller's tensor changed in place. A timed call is an
ordinary ``call``: the grader times it from outside and checks its output like any other. Tensors arrive on the
device the grader names (a CUDA device where there is one, or ``meta``). Every reply says which forbidden routines
ran since the last one (``traps``).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import sys
import traceback
from types import ModuleType
from typing import Any

from autograder import protocol
from autograder.calls import forward_backward, seed_everything
from autograder.notebook_cells import run_notebook
from autograder.worker.traps import Traps


class Worker:
    """Holds the student's modules and the objects the parent refers to by handle."""

    def __init__(self, modules: list[dict], traps: Traps, root: str):
        self.entries = modules
        self.traps = traps
        self.root = root
        self.modules: dict[str, ModuleType] = {}
        self.handles: dict[int, Any] = {}
        self.next_handle = 1
        self.cell_errors: dict[str, list[str]] = {}  # notebook module -> the cells that raised while loading

    def load(self) -> dict:
        """Import every module of the submission; a notebook runs cell by cell."""
        warnings: list[str] = []
        for entry in self.entries:
            if entry.get("notebook"):
                module, cell_errors = run_notebook(entry["name"], os.path.join(self.root, entry["notebook"]))
                warnings += cell_errors
                self.cell_errors[entry["name"]] = cell_errors
                self.modules[entry["name"]] = module
            else:
                self.modules[entry["name"]] = importlib.import_module(entry["name"])
        return {"warnings": warnings}

    def handle(self, request: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        op = request.get("op")
        out_blobs: list[bytes] = []
        try:
            value = self._answer(op, request, blobs)
            reply = {"ok": True, "value": protocol.encode(value, out_blobs, self._make_handle)}
        except BaseException as exc:  # noqa: BLE001 - SystemExit from student code is an answer too
            if isinstance(exc, KeyboardInterrupt):
                raise
            out_blobs = []
            reply = {"ok": False, "error": describe_exception(exc, self.root)}
        used = self.traps.take()
        if used:
            reply["forbidden"] = used
        return reply, out_blobs

    def _answer(self, op: str, request: dict, blobs: list[bytes]) -> Any:
        if op == "load":
            return self.load()
        if op == "trim":
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None).malloc_trim(0)
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_initialized():
                torch.cuda.empty_cache()
            return None
        if op == "seed":
            seed_everything(int(request["seed"]))
            return None
        if op == "release":
            self.handles.pop(int(request["handle"]), None)
            return None
        args = protocol.decode(request.get("args", {"__list__": []}), blobs, self._resolve, place=True)
        kwargs = protocol.decode(request.get("kwargs", {"__dict__": {}}), blobs, self._resolve, place=True)
        target = self._target(request["target"])
        if op == "getattr":
            return target
        if op == "call":
            output = target(*args, **kwargs)
            return {"output": output, "args": args, "kwargs": kwargs} if request.get("inputs") is True else output
        if op == "grad":
            grad_output = request.get("grad_output")
            if grad_output is not None:
                grad_output = protocol.decode(grad_output, blobs, self._resolve, place=True)
            return forward_backward(target, args, kwargs, grad_output)
        raise ValueError(f"unknown op {op!r}")

    def _target(self, target: dict) -> Any:
        if "handle" in target:
            obj = self._resolve({"__handle__": target["handle"]})
        else:
            name = target["module"]
            if name not in self.modules:
                raise LookupError(f"module {name!r} was not loaded")
            obj = self.modules[name]
        for attr in target.get("path", []):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                owner = getattr(obj, "__name__", type(obj).__name__)
                hint = "check the name against the handout"
                if obj is self.modules.get(target.get("module")) and self.cell_errors.get(target["module"]):
                    hint = ("a cell of your notebook raised an error before defining it (see the cells that raised "
                            "errors), or the name differs from the handout")
                raise AttributeError(f"{owner} has no attribute {attr!r}; {hint}") from None
        return obj

    def _resolve(self, node: dict) -> Any:
        handle = node.get("__handle__")
        if handle not in self.handles:
            raise LookupError(f"unknown object handle {handle!r}")
        return self.handles[handle]

    def _make_handle(self, obj: Any) -> dict:
        handle = self.next_handle
        self.next_handle += 1
        self.handles[handle] = obj
        kind = type(obj)
        return {"__handle__": handle, "type": f"{kind.__module__}.{kind.__qualname__}", "callable": callable(obj)}


def describe_exception(exc: BaseException, root: str) -> dict:
    """Type, message and a traceback trimmed to the frames in the student's own files."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename.startswith(root)
           or (f.filename.startswith("<") and not f.filename.startswith("<frozen"))]
    lines = traceback.format_list(own[-8:]) if own else []
    if isinstance(exc, SyntaxError) and exc.filename:
        lines.append(f'  File "{os.path.basename(exc.filename)}", line {exc.lineno}\n    {(exc.text or "").strip()}\n')
    text = "".join(lines).replace(root + os.sep, "")
    message = str(exc)
    if isinstance(exc, SystemExit):
        message = f"the code called sys.exit({exc.code!r}); graded code must return values, not exit"
    return {"type": type(exc).__name__, "message": message[:2000], "traceback": text[-4000:]}
