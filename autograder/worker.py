"""The student side: a subprocess that imports the submission and serves calls from the grader.

Started by ``autograder.sandbox`` with resource limits, a clean environment and (as root) an
unprivileged uid. It reads requests on one pipe and answers on another (``autograder.protocol``);
student ``print`` output goes to stdout, which the parent captures separately, so a submission
cannot corrupt the channel by printing. Nothing here is trusted by the parent: every answer is
validated there, and scores are computed only there.

Requests (``op``): ``load``, ``call`` (a function, class, method or attribute path, with args),
``getattr``, ``grad`` (forward and backward through a module or function), ``time`` (run a call for the
parent's stopwatch, answering with nothing), ``trim`` (return free heap memory to the system, so the
parent's memory readings start clean), ``seed``, ``release``.
"""

from __future__ import annotations

import argparse
import builtins
import contextlib
import ctypes
import importlib
import json
import os
import sys
import traceback
import warnings
from types import ModuleType
from typing import Any

from autograder import protocol


class Worker:
    """Holds the student's modules and the objects the parent refers to by handle."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.root = spec["root"]
        self.modules: dict[str, ModuleType] = {}
        self.handles: dict[int, Any] = {}
        self.next_handle = 1
        self.forbidden_used: list[str] = []
        self.cell_errors: dict[str, list[str]] = {}  # notebook module -> the cells that raised while loading

    # ------------------------------------------------------------ loading

    def load(self) -> dict:
        """Import every module of the submission; a notebook runs cell by cell."""
        warnings: list[str] = []
        for entry in self.spec["modules"]:
            if entry.get("notebook"):
                module, cell_errors = run_notebook(entry["name"], os.path.join(self.root, entry["notebook"]))
                warnings += cell_errors
                self.cell_errors[entry["name"]] = cell_errors
                self.modules[entry["name"]] = module
            else:
                self.modules[entry["name"]] = importlib.import_module(entry["name"])
        return {"warnings": warnings}

    # ------------------------------------------------------------ requests

    def handle(self, request: dict, blobs: list[bytes]) -> tuple[dict, list[bytes]]:
        op = request.get("op")
        out_blobs: list[bytes] = []
        try:
            if op == "load":
                result = self.load()
                return {"ok": True, "value": result}, out_blobs
            if op == "trim":
                with contextlib.suppress(OSError, AttributeError):
                    ctypes.CDLL(None).malloc_trim(0)
                return {"ok": True, "value": None}, out_blobs
            if op == "seed":
                seed_everything(int(request["seed"]))
                return {"ok": True, "value": None}, out_blobs
            if op == "release":
                self.handles.pop(int(request["handle"]), None)
                return {"ok": True, "value": None}, out_blobs
            args = protocol.decode(request.get("args", {"__list__": []}), blobs, self._resolve)
            kwargs = protocol.decode(request.get("kwargs", {"__dict__": {}}), blobs, self._resolve)
            target = self._target(request["target"])
            if op == "getattr":
                value = target
            elif op == "call":
                value = target(*args, **kwargs)
            elif op == "time":
                value = timed_call(target, args, kwargs, str(request.get("device", "cpu")))
            elif op == "grad":
                grad_output = request.get("grad_output")
                if grad_output is not None:
                    grad_output = protocol.decode(grad_output, blobs, self._resolve)
                value = forward_backward(target, args, kwargs, grad_output)
            else:
                raise ValueError(f"unknown op {op!r}")
            encoded = protocol.encode(value, out_blobs, self._make_handle)
            reply = {"ok": True, "value": encoded}
        except BaseException as exc:  # noqa: BLE001 - SystemExit from student code is an answer too
            if isinstance(exc, KeyboardInterrupt):
                raise
            out_blobs = []
            reply = {"ok": False, "error": describe_exception(exc, self.root)}
        if self.forbidden_used:
            reply["forbidden"] = sorted(set(self.forbidden_used))
            self.forbidden_used.clear()
        return reply, out_blobs

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

    # ------------------------------------------------------------ forbidden APIs

    def install_traps(self, names: list[str]) -> None:
        """Replace each forbidden function or class with a wrapper that records its use."""
        for dotted in names:
            owner_name, _, attr = dotted.rpartition(".")
            try:
                owner = importlib.import_module(owner_name)
                original = getattr(owner, attr)
            except (ImportError, AttributeError):
                continue
            if isinstance(original, type):
                init = original.__init__

                def trapped_init(obj, *args, _init=init, _name=dotted, **kwargs):
                    self.forbidden_used.append(_name)
                    _init(obj, *args, **kwargs)

                original.__init__ = trapped_init
            else:

                def trapped(*args, _original=original, _name=dotted, **kwargs):
                    self.forbidden_used.append(_name)
                    return _original(*args, **kwargs)

                setattr(owner, attr, trapped)


class NotebookUnreadable(ValueError):
    """A submitted notebook file that is not a notebook (not JSON, or no list of cells)."""


def read_notebook(path: str) -> dict:
    """The notebook at ``path`` as JSON, or ``NotebookUnreadable`` with what to do about it."""
    filename = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as handle:
            notebook = json.load(handle)
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


def seed_everything(seed: int) -> None:
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def forward_backward(target, args, kwargs, grad_output=None) -> dict:
    """Run ``target(*args)`` with gradients on floating inputs, backpropagate, return everything.

    The output gradient is ``grad_output`` when given (same structure as the output), else ones.
    Returns ``{"output", "input_grads" (one per positional arg, None where not a float tensor),
    "param_grads" ({name: grad or None} when target is an nn.Module)}``.
    """
    import torch

    inputs = [a.detach().clone().requires_grad_(True) if _is_float_tensor(a) else a for a in args]
    output = target(*inputs, **kwargs)
    outputs = list(output) if isinstance(output, tuple | list) else [output]
    if grad_output is None:
        grads = [torch.ones_like(o) if _is_float_tensor(o) else None for o in outputs]
    else:
        grads = list(grad_output) if isinstance(grad_output, tuple | list) else [grad_output]
    pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
             if g is not None and _is_float_tensor(o) and o.requires_grad]
    if not pairs:
        raise RuntimeError("the output does not require grad: is it detached from the inputs and parameters?")
    torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
    params = {}
    if isinstance(target, torch.nn.Module):
        params = {name: p.grad for name, p in target.named_parameters()}
    return {
        "output": output,
        "input_grads": [a.grad if _is_float_tensor(a) else None for a in inputs],
        "param_grads": params,
    }


def timed_call(target, args, kwargs, device: str) -> dict:
    """Run ``target(*args)`` on ``device`` for the parent's stopwatch; the output is discarded.

    Tensor arguments are moved to ``device`` first. On CUDA the call is synchronised and
    ``{"cuda_peak_bytes"}`` reported (the parent cannot read GPU memory; on the CPU it reads ``/proc``).
    """
    import torch
    from torch.utils._pytree import tree_map

    if device != "cpu":
        args, kwargs = tree_map(lambda v: v.to(device) if isinstance(v, torch.Tensor) else v, (args, kwargs))
    if not device.startswith("cuda"):
        target(*args, **kwargs)
        return {}
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    target(*args, **kwargs)
    torch.cuda.synchronize()
    return {"cuda_peak_bytes": torch.cuda.max_memory_allocated() - base}


def _is_float_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.is_floating_point()


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


def main() -> None:
    parser = argparse.ArgumentParser(description="autograder worker (started by the grader, not by hand)")
    parser.add_argument("--requests", type=int, required=True)
    parser.add_argument("--replies", type=int, required=True)
    parser.add_argument("--spec", required=True, help="JSON: root, modules, forbidden, threads")
    options = parser.parse_args()
    spec = json.loads(options.spec)
    os.chdir(spec["root"])
    sys.path.insert(0, spec["root"])
    sys.argv = ["submission"]
    builtins.input = _no_input

    import torch

    torch.set_num_threads(int(spec.get("threads", 1)))
    worker = Worker(spec)
    worker.install_traps(spec.get("forbidden", []))
    requests, replies = options.requests, options.replies
    while True:
        try:
            request, blobs = protocol.read_frame(requests)
        except protocol.PeerClosed:
            return
        reply, out_blobs = worker.handle(request, blobs)
        sys.stdout.flush()
        sys.stderr.flush()
        protocol.write_frame(replies, reply, out_blobs)


def _no_input(*_args, **_kwargs):
    raise RuntimeError("input() is not available while grading: graded code must not wait for the keyboard")


if __name__ == "__main__":
    main()
