"""The ``student`` object tests use: remote calls into the worker, with deadlines and clear failures.

``student.masking.causal_mask(5)`` imports nothing in the parent: it sends a ``call`` request and
decodes the reply. Objects that cannot travel come back as ``RemoteObject`` handles, so
``m = student.masking.CausalSelfAttention(d_model=32, n_head=4)``, ``m.load_state_dict(state)``,
``m.eval()`` and ``m(x)`` read the same as on the reference module; that symmetry lets a test run
one function over both implementations. Every failure on the student side becomes an
``AssertionError`` subclass whose message is written for the student.

The worker is started lazily and restarted after a crash or timeout; objects created before a
restart are gone, and using one says so. A submission that cannot be loaded (syntax error,
exit or timeout during import) is marked broken once, and every later call fails fast with the
same message instead of waiting for its own timeout.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from autograder import protocol, sinks
from autograder.grading import samplers
from autograder.sandbox.capture import OutputCapture
from autograder.sandbox.config import Limits
from autograder.sandbox.isolation import Isolation
from autograder.sandbox.process import OverCpuTime, Sandbox, SandboxError, WorkerDied

DEFAULT_CALL_SECONDS = 60.0
# How large a reply may be: what the question can need. The grader asks before it knows the reference's answer (a
# test calls the student's code first, then the oracle), so the bound is a multiple of what the request carries, and
# no less than a floor far above any test's answer (the lm retraining's state_dict() is under 2 MB). A reply over it
# is refused from its announced size, before any of it is read (a valid 1 GiB reply took the runner to 3.3 GB).
REPLY_FLOOR, REPLY_FACTOR = 64 << 20, 8
MAX_RESTARTS = 8
RESTARTED = "\n[... the process running your code was stopped here and started again]\n"
# What a skeleton's stub raises (autograder.authoring.build): "OWNER: hint" or "OWNER is not implemented yet".
STUB = re.compile(r"(?P<owner>[A-Za-z_][\w.]*)(?:: (?P<hint>.*)| is not implemented yet)", re.DOTALL)


class StudentCodeFailure(AssertionError):
    """Base class: the student's code did something that costs the test its points."""


# What a file error in student code most often means while grading (autograder/worker/confine.py's allow-list).
FILES_NOTE = ("While it is graded, your code can open only the files you hand in (by paths relative to them), a "
              "temporary folder and the Python installation: no other file on the grading machine, nor one on yours.")


class StudentError(StudentCodeFailure):
    """The student's code raised an exception."""

    def __init__(self, call: str, error: dict):
        self.error_type = str(error.get("type", "Exception"))
        self.error_message = str(error.get("message", ""))
        trace = str(error.get("traceback", "")).rstrip()
        # Feedback is Markdown: what the student's process said is escaped on one line, fenced on several. The
        # headline says the same in plain words, for the status (the summary, the gradebook, the terminal).
        message = self.error_message.strip()
        first_line = message.partition("\n")[0]
        self.headline = f"{call} raised {self.error_type}: {first_line}"
        shown = f"\n{sinks.fenced(message)}" if "\n" in message else f" {sinks.inline(message)}"
        text = f"{call} raised {sinks.inline(self.error_type)}:{shown}"
        stub = STUB.fullmatch(self.error_message) if self.error_type == "NotImplementedError" else None
        if stub:
            owner, hint = stub["owner"], stub["hint"]
            called = call.split("(")[0].rsplit(".", 1)[-1]
            text = (f"{call} is not implemented yet." if owner.split(".")[0].endswith(called)
                    else f"{call} calls {owner}, which is not implemented yet.") + (
                f" Hint: {sinks.inline(hint)}" if hint else "")
        elif trace:
            text += f"\nWhere it happened in your code:\n{sinks.fenced(trace)}"
        if self.error_type in ("PermissionError", "FileNotFoundError"):
            text += f"\n{FILES_NOTE}"
        super().__init__(text)


class StudentTimeout(StudentCodeFailure):
    """A call did not finish before the test's time limit."""


class StudentCrashed(StudentCodeFailure):
    """The worker process died during a call."""


class SubmissionBroken(StudentCodeFailure):
    """The submission could not be loaded at all; every test fails with this message."""


class GraderFailure(Exception):
    """The grader could not run the submission's code (its sandbox would not start): not the student's doing, and
    not an ``AssertionError``, so the test scores nothing and says that the grader failed."""


class ForbiddenAPI(StudentCodeFailure):
    """The student's code used a library routine the assignment does not allow."""


class Channel(Protocol):
    """What ``Student`` needs of whatever runs the student's code: a ``Sandbox`` (a confined worker process), or, in a
    notebook's own kernel, ``autograder.grading.notebook_checks.InProcess`` (the kernel's modules, answered there)."""

    capture: OutputCapture | None  # what the code prints, where the grader reads it (None: it is not captured)
    answer: dict  # what the worker said once confined, before any student file ran (``cuda``: whether it can use it)

    @property
    def alive(self) -> bool: ...

    @property
    def pid(self) -> int | None: ...

    def request(self, header: dict, blobs: list[bytes], deadline: float, max_bytes: int | None = None,
                cpu_limit: float | None = None) -> tuple[dict, list[bytes]]: ...

    def cpu_seconds(self) -> float: ...

    def close(self) -> None: ...


class Student:
    """Parent-side handle on one submission; attribute access gives its modules, answered through a ``Channel``."""

    def __init__(self, root: Path | None, modules: list[dict], limits: Limits, isolation: Isolation,
                 forbidden: list[str] | None = None, broken: str | None = None, load_seconds: float = 60.0):
        self._root = root
        self._modules = {m["name"]: m for m in modules}
        self._spec = {"modules": modules, "forbidden": forbidden or []}
        self._limits = limits
        self._isolation = isolation
        self._channel: Channel | None = None
        self._generation = 0
        # Each loaded worker's output and where its calls' output begins (after what loading printed), by generation.
        self._captures: dict[int, tuple[OutputCapture, int]] = {}
        self._restarts = 0
        self._stops: list[str] = []  # why the worker was stopped, each time (a timeout, a crash)
        self.broken = broken
        self.broken_headline = ""  # why it is broken in plain words (``StudentError.headline``), where it raised
        self.grader_problem: str | None = None
        self.seconds = {"starting": 0.0, "loading": 0.0, "calls": 0.0}  # starting workers, importing the code, calls
        self.deadline: float | None = None
        self.time_limit: float | None = None
        self.cpu_left: float | None = None  # CPU seconds the calls may still use (``cpu_budget``); None: unbounded
        self._cpu_budget = 0.0
        self.load_seconds = load_seconds
        self.load_warnings: list[str] = []
        self.device: str | None = None

    # ------------------------------------------------------------ attribute sugar

    def __getattr__(self, name: str) -> RemoteAttr:
        if name.startswith("_") or name not in self.__dict__.get("_modules", {}):
            raise AttributeError(name)
        return RemoteAttr(self, {"module": name, "path": []}, name)

    @property
    def root(self) -> Path | None:
        """The staged copy of the submission (None when it could not be staged). It is also the worker's working
        folder, so student code may have changed it: read its files as untrusted data, never following links."""
        return self._root

    # ------------------------------------------------------------ life cycle

    def gpu(self) -> bool:
        """Whether the worker can use CUDA: what it found once confined, before it ran any student file."""
        return bool(self._ensure_worker().answer.get("cuda"))

    def _ensure_worker(self) -> Channel:
        if self.grader_problem:
            raise GraderFailure(self.grader_problem)
        if self.broken:
            raise SubmissionBroken(self.broken)
        if self._channel is not None and self._channel.alive:
            return self._channel
        if self._channel is not None:
            self._channel.close()
            self._restarts += 1
            if self._restarts > MAX_RESTARTS:
                last = "; ".join(self._stops[-3:]) or "it exited"
                self.broken = (f"the process running your code had to be stopped {MAX_RESTARTS} times (the last "
                               f"times: {last}), so the remaining tests were not run")
                raise SubmissionBroken(self.broken)
        started = time.monotonic()  # starting and loading have their own budget, not charged to the test
        self._channel = Sandbox(self._root, self._spec, self._limits, self._isolation)
        try:
            self._channel.start()
        except SandboxError as exc:
            self.grader_problem = f"the grader could not start the process that runs your code: {exc}"
            self.close()
            raise GraderFailure(self.grader_problem) from None
        self._generation += 1
        files = ", ".join(m.get("notebook") or f"{m['name']}.py" for m in self._modules.values())
        loading = time.monotonic()
        self.seconds["starting"] += loading - started
        try:
            # Loading has its own budget and is not charged to the test that triggered it.
            reply, blobs = self._channel.request({"op": "load"}, [], time.monotonic() + self.load_seconds)
            value = protocol.decode(reply.get("value"), blobs) if reply.get("ok") else None
            self.seconds["loading"] += time.monotonic() - loading
        except protocol.ReadTimeout:
            self.broken = (f"loading {files} did not finish within {self.load_seconds:g} s: "
                           "is there an infinite loop, or training, at the top level of the file?")
        except WorkerDied as died:
            self._grader_side(died)
            self.broken = f"loading {files} stopped the process: {died.describe()}"
        except protocol.ProtocolError as exc:
            self.broken = f"loading {files} broke the grader's channel: {exc}"
        else:
            if reply.get("ok"):
                if self.deadline is not None:
                    self.deadline += time.monotonic() - started
                warnings = value.get("warnings") if isinstance(value, dict) else None
                self.load_warnings = [str(w) for w in warnings][:20] if isinstance(warnings, list) else []
                if self._channel.capture is not None:
                    self._captures[self._generation] = (self._channel.capture, self._channel.capture.settled_mark())
                return self._channel
            error = StudentError(f"importing {files}", reply.get("error") or {})
            self.broken = f"{error}\nFix this first: none of your code can be graded until it loads."
            self.broken_headline = error.headline
        raise SubmissionBroken(self.broken)

    def _grader_side(self, died: WorkerDied) -> None:
        """Raise ``GraderFailure`` when the worker died of the grader's own circumstances (the container's memory ran
        out): no test graded after it could be trusted, and the submission is not to blame."""
        if died.container:
            self.grader_problem = died.describe()
            self.close()
            raise GraderFailure(self.grader_problem) from None

    def _deadline(self) -> float:
        if self.deadline is not None:
            return self.deadline
        return time.monotonic() + DEFAULT_CALL_SECONDS

    def excuse(self, seconds: float) -> None:
        """Move the test's deadline by ``seconds`` the grader spent on its own side (the reference's and known
        mistakes' values, computed live or recorded): the time limit is the student's code's. Under load a recording
        of the reference ran out of a 20 s limit while the grader computed mistakes' values."""
        if self.deadline is not None:
            self.deadline += seconds

    @contextlib.contextmanager
    def cpu_budget(self, seconds: float) -> Iterator[None]:
        """Calls inside the block may use ``seconds`` of CPU time together (the worker's processes: every thread, and
        the children they waited for; ``Sandbox.cpu_seconds``). The call that goes past it is stopped and raises a
        ``StudentTimeout`` that says so. Unlike the wall-clock deadline, the budget does not shrink when other work
        shares the machine's cores."""
        self.cpu_left, self._cpu_budget = seconds, seconds
        try:
            yield
        finally:
            self.cpu_left = None

    def output_mark(self) -> tuple[int, int]:
        """Where the output stands now: (generation, bytes) of the running worker, or (the next generation, -1)."""
        if self._channel is None or self._generation not in self._captures:
            return (self._generation + 1, -1)
        return (self._generation, self._captures[self._generation][0].mark())

    def output_since(self, mark: tuple[int, int], limit: int = 2000) -> str:
        """What the student's code printed since ``mark``: in that worker, then in each worker started after it (what
        their calls printed: loading prints once, not into a test). A test whose call timed out or crashed, and whose
        next call started a new worker, still shows what the stopped one printed, which explains the stop."""
        generation, position = mark
        texts = [capture.since(position if number == generation and position >= 0 else loaded, limit)
                 for number, (capture, loaded) in sorted(self._captures.items()) if number >= generation]
        return RESTARTED.join(text for text in texts if text)

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    # ------------------------------------------------------------ requests

    def request(self, op: str, target: dict, args=(), kwargs=None, *, label: str = "your code",
                generation: int | None = None, fields: dict | None = None, grad_output=None,
                device: str | None = None) -> Any:
        """Run ``op`` on ``target`` in the worker and return the decoded value; the worker puts tensor arguments
        on ``device`` when given. The reply may be as large as ``REPLY_FLOOR`` and ``REPLY_FACTOR`` allow."""
        channel = self._ensure_worker()
        if generation is not None and generation != self._generation:
            raise StudentCrashed(f"{label}: this object was lost when your code crashed or timed out "
                                 "earlier in this test")
        blobs: list[bytes] = []
        header = {"op": op, "target": target, **(fields or {}),
                  "args": protocol.encode(list(args), blobs, self._handle_node, device=device),
                  "kwargs": protocol.encode(dict(kwargs or {}), blobs, self._handle_node, device=device)}
        if grad_output is not None:
            header["grad_output"] = protocol.encode(grad_output, blobs, self._handle_node)
        limit = max(REPLY_FLOOR, REPLY_FACTOR * sum(len(blob) for blob in blobs))
        started = time.monotonic()
        cpu_base = None if self.cpu_left is None else channel.cpu_seconds()
        try:
            reply, reply_blobs = channel.request(header, blobs, self._deadline(), max_bytes=limit,
                                                 cpu_limit=None if cpu_base is None else cpu_base + self.cpu_left)
            self.seconds["calls"] += time.monotonic() - started
            if cpu_base is not None:
                self.cpu_left = max(0.0, self.cpu_left - (channel.cpu_seconds() - cpu_base))
        except OverCpuTime:
            self.cpu_left = 0.0
            self._stops.append(f"{label} used up its CPU time")
            raise StudentTimeout(
                f"{label} was stopped once your code had used {self._cpu_budget:.0f} s of CPU time (all its "
                f"threads and processes together, after {time.monotonic() - started:.0f} s of wall-clock time), the "
                "most it may use here.") from None
        except protocol.ReadTimeout:
            waited = time.monotonic() - started
            limit = f"the test's time limit of {self.time_limit:g} s" if self.time_limit else "the time limit"
            self._stops.append(f"{label} ran past the time limit")
            raise StudentTimeout(
                f"{label} did not finish within {limit} (this call ran {waited:.1f} s and was stopped). Look "
                "for an infinite loop or a very slow path, such as a Python loop over every element of a tensor."
            ) from None
        except WorkerDied as died:
            self._grader_side(died)
            self._stops.append(f"{label}: {died.describe()}")
            raise StudentCrashed(f"{label}: {died.describe()}") from None
        except protocol.TooLarge as exc:
            self._stops.append(f"{label} returned too much")
            raise StudentCrashed(f"{label} returned {exc.size / (1 << 20):.0f} MB, more than the "
                                 f"{exc.limit / (1 << 20):.0f} MB this check can need: return only what the "
                                 "function is asked for (not a copy of your data or model)") from None
        except protocol.ProtocolError as exc:
            self._stops.append(f"{label} sent an invalid reply")
            raise StudentCrashed(f"{label}: the process running your code sent an invalid reply ({exc})") from None
        if reply.get("forbidden"):
            names = ", ".join(map(str, reply["forbidden"]))
            raise ForbiddenAPI(f"{label} used {names}, which this assignment does not allow: "
                               "write the computation with basic tensor operations.")
        if not reply.get("ok"):
            error = dict(reply.get("error") or {})
            if error.get("type") == "MemoryError" or "allocate memory" in str(error.get("message", "")):
                error["message"] = (f"{error.get('message', '')} [the grader allows {self._limits.memory_mb} MB: "
                                    "look for a tensor that grows without bound, or an avoidably huge intermediate]")
            raise StudentError(label, error)
        generation = self._generation
        try:
            return protocol.decode(reply.get("value"), reply_blobs,
                                   lambda node: RemoteObject(self, node, generation))
        except protocol.ProtocolError as exc:
            raise StudentCrashed(f"{label} returned something the grader cannot read ({exc})") from None

    def measure(self, target: dict, args, kwargs, device: str, *, label: str,
                generation: int | None) -> tuple[float, int | None, Any]:
        """Run one ordinary ``call`` (inputs on ``device``) timed by the parent's clock: its seconds, its peak
        memory in bytes read from outside the worker, and its output, which the caller checks like any other.

        Nothing the student's process says about itself is trusted: a thread of the parent samples the worker's
        resident size (``/proc/PID/statm``) on the CPU, or its GPU memory (NVML's per-process figure) on CUDA,
        and the peak is the highest sample above the size after a ``trim`` request; ``None`` where neither can
        be read. A submission that tampers with its own allocator can understate its memory; it cannot understate
        its time, and an answer given early is checked.
        """
        pid = self._ensure_worker().pid
        self.request("trim", {}, label=label, generation=generation)
        sampler = samplers.GpuSampler(pid) if device.startswith("cuda") else samplers.ResidentSampler(pid)
        with sampler:
            started = time.perf_counter()
            value = self.request("call", target, args, kwargs, label=label, generation=generation, device=device)
            seconds = time.perf_counter() - started
        return seconds, sampler.rise, value

    def _handle_node(self, obj: Any) -> dict:
        if isinstance(obj, RemoteObject):
            if obj._generation != self._generation:
                raise StudentCrashed("an object from before your code crashed was used again")
            return {"__handle__": obj._handle}
        raise protocol.ProtocolError(f"a {type(obj).__name__} cannot be sent to your code")

    def seed(self, seed: int) -> None:
        """Seed ``random``, numpy and torch in the worker (dropout masks, sampling)."""
        self.request("seed", {}, fields={"seed": int(seed)})


class RemoteAttr:
    """An attribute path in the worker: call it, or read it with ``.get()``."""

    def __init__(self, student: Student, target: dict, label: str, generation: int | None = None,
                 device: str | None = None):
        self._student, self._target, self._label, self._generation = student, target, label, generation
        self._device = device

    def __getattr__(self, name: str) -> RemoteAttr:
        if name.startswith("_"):
            raise AttributeError(name)
        target = dict(self._target, path=[*self._target["path"], name])
        return RemoteAttr(self._student, target, f"{self._label}.{name}", self._generation)

    def __call__(self, *args, **kwargs) -> Any:
        return self._student.request("call", self._target, args, kwargs, label=f"{self._label}(...)",
                                     generation=self._generation, device=self._device)

    def on(self, device) -> RemoteAttr:
        """The same call with its tensor arguments placed on ``device`` in the worker (``"meta"``: a second device
        type on any machine, whose tensors carry shapes and no values; a result there comes back as a meta tensor)."""
        return RemoteAttr(self._student, self._target, self._label, self._generation, str(device))

    def with_inputs(self, *args, **kwargs) -> tuple[Any, list, dict]:
        """Call it and return ``(output, args, kwargs)``, the arguments as the call left them in the worker: a check
        that the caller's tensors were not changed in place compares them with what it sent."""
        reply = self._student.request("call", self._target, args, kwargs, label=f"{self._label}(...)",
                                      generation=self._generation, fields={"inputs": True}, device=self._device)
        if not (isinstance(reply, dict) and isinstance(reply.get("args"), list)
                and isinstance(reply.get("kwargs"), dict) and "output" in reply):
            raise StudentCrashed(f"{self._label}(...): the process running your code sent an invalid reply")
        return reply["output"], reply["args"], reply["kwargs"]

    def get(self) -> Any:
        return self._student.request("getattr", self._target, label=self._label, generation=self._generation)

    def assign(self, values: dict) -> None:
        """Set attributes of the remote object (``vars(obj).update(values)``): a check that a notebook's answers read
        their arguments changes the notebook's globals, calls the answers again, and puts the globals back."""
        RemoteAttr(self._student, dict(self._target, path=[*self._target["path"], "__dict__", "update"]),
                   f"{self._label} (its globals)", self._generation)(values)

    def measure(self, args: tuple = (), kwargs: dict | None = None,
                device: str = "cpu") -> tuple[float, int | None, Any]:
        """Run the call once in the worker: the parent's wall-clock seconds, the call's peak memory in bytes and its
        output (see ``Student.measure``, and ``autograder.grading.timing``, which compares them with the
        reference's)."""
        return self._student.measure(self._target, args, kwargs or {}, device, label=f"{self._label}(...)",
                                     generation=self._generation)


class RemoteObject(RemoteAttr):
    """An object that lives in the worker (a module instance, a dataset, ...)."""

    def __init__(self, student: Student, node: dict, generation: int):
        handle = node.get("__handle__")
        if not isinstance(handle, int):
            raise protocol.ProtocolError("invalid object handle")
        self._handle = handle
        self.remote_type = str(node.get("type", "object"))
        short = self.remote_type.rsplit(".", 1)[-1]
        super().__init__(student, {"handle": handle, "path": []}, f"your {short}", generation)

    def forward_backward(self, *args, grad_output=None, **kwargs) -> dict:
        """Forward ``args`` with gradients, backpropagate ``grad_output`` (ones if None).

        Returns ``{"output", "input_grads", "param_grads"}`` as in ``autograder.worker.forward_backward``.
        """
        return self._student.request("grad", self._target, args, kwargs, label=f"{self._label} forward/backward",
                                     generation=self._generation, grad_output=grad_output)

    def __repr__(self) -> str:
        return f"<remote {self.remote_type}>"
