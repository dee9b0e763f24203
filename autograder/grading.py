"""What a graded test is written with: the ``graded`` decorator, partial credit, and helpers that
work the same on the student proxy and on a local implementation.

    @graded(points=2, covers=["masked_softmax"])
    def test_rows_sum_to_one(masking, oracle, parts):
        \"\"\"masked_softmax: rows sum to one\"\"\"
        ...

The first docstring line is the name students see. ``covers`` names the student functions or
classes the test grades: a forbidden API found in one of them fails the test before it runs.
Visibility defaults to ``visible`` for tests in ``public/`` (they ship to students) and to
``after_due_date`` for tests in ``hidden/``.

Carried modules (a student's file from an earlier assignment, handed in again): a test marked
``checks_carried="masking"`` checks that module (usually 0 points, running the earlier suite's own
checks through ``run_check``); a test marked ``builds_on=["masking"]`` depends on it, and when it fails
after the check failed, its feedback says that the carried file is the likely cause.
"""

from __future__ import annotations

import hashlib
import inspect
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from autograder import calls
from autograder.checks import assert_close, assert_rows_sum_to_one, assert_tensor, recognise
from autograder.proxy import RemoteObject, StudentCodeFailure
from autograder.results import VISIBILITIES

__all__ = ["graded", "Parts", "run_check", "forward_backward", "derive_seed", "read", "assert_close",
           "assert_tensor", "assert_rows_sum_to_one", "recognise"]


def graded(points: float, *, visibility: str | None = None, timeout: float | None = None,
           covers: tuple[str, ...] | list[str] = (), tags: tuple[str, ...] | list[str] = (),
           checks_carried: str | None = None, builds_on: tuple[str, ...] | list[str] = ()):
    """Mark a test as graded: its points, visibility, time limit (seconds) and covered symbols.

    ``checks_carried`` names the carried module this test checks; ``builds_on`` the carried modules the
    test depends on (see the module docstring).
    """
    if visibility is not None and visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {VISIBILITIES}, not {visibility!r}")
    if points < 0:
        raise ValueError("points cannot be negative")
    return pytest.mark.graded(points=float(points), visibility=visibility, timeout=timeout,
                              covers=tuple(covers), tags=tuple(tags), checks_carried=checks_carried,
                              builds_on=tuple(builds_on))


class Parts:
    """Partial credit: each ``with parts("name", weight):`` block passes or fails on its own."""

    def __init__(self):
        self.results: list[tuple[str, float, str | None]] = []
        self.notes: list[str] = []
        self.grader_errors: list[str] = []  # tracebacks of parts the grader could not check, for the log
        self.figures: dict[str, dict] = {}

    def note(self, text: str) -> None:
        """Tell the student ``text`` whether the test passes or fails (the figures a passing run reached, say)."""
        self.notes.append(text)

    def figure(self, name: str, value: float | None, *, at_least: float | None = None,
               at_most: float | None = None) -> None:
        """Record a measured figure and its gate (a runtime ratio, an accuracy) for the course staff: it goes to the
        test's ``extra_data["figures"]`` in results.json, which the class report plots across submissions; the
        student reads the figures in the test's words, not from here. ``value`` None: it could not be measured."""
        gate = {"at_least": at_least} if at_least is not None else {"at_most": at_most} if at_most is not None else {}
        self.figures[name] = {"value": None if value is None else float(value), **gate}

    @contextmanager
    def __call__(self, name: str, weight: float = 1.0) -> Iterator[None]:
        """A part: it passes when its block finishes, and whatever else happens in it scores it zero (fail closed):
        a failed check, the student's code failing, or the grader failing to check it (said as such)."""
        try:
            yield
        except (AssertionError, StudentCodeFailure) as exc:
            self.results.append((name, weight, str(exc) or type(exc).__name__))
        except Exception as exc:  # noqa: BLE001 - a part that could not be checked earns nothing
            self.grader_errors.append(f"{name}: {traceback.format_exc()}")
            self.results.append((name, weight, f"The grader could not check this part ({type(exc).__name__}: "
                                               f"{exc}). If your code returns what the handout documents, this is "
                                               "a grader problem: tell the course staff."))
        else:
            self.results.append((name, weight, None))

    @property
    def used(self) -> bool:
        return bool(self.results)

    def fraction(self, declared: float = 0.0) -> float:
        total = max(sum(w for _, w, _ in self.results), declared)
        return sum(w for _, w, error in self.results if error is None) / total if total else 0.0

    @property
    def all_passed(self) -> bool:
        return all(error is None for _, _, error in self.results)

    def summary(self) -> str:
        """One line per part; consecutive parts failing with the same message share it."""
        lines, index = [], 0
        while index < len(self.results):
            name, weight, error = self.results[index]
            group = [name]
            while (index + len(group) < len(self.results) and error is not None
                   and self.results[index + len(group)][2] == error):
                group.append(self.results[index + len(group)][0])
            index += len(group)
            if error is None:
                lines.append(f"- passed: {name}")
                continue
            lines.append(f"- FAILED: {'; '.join(group)}")
            lines += ["  " + line for line in error.splitlines()]
        return "\n".join(lines)


def run_check(check: Callable, **fixtures) -> None:
    """Run another suite's test function as one check, with the fixtures it names.

    ``fixtures`` supplies them by name (``student``, ``masking``, ``oracle``, ...); ``parts`` is a fresh
    ``Parts`` whose failures are raised together as one ``AssertionError``. This is how a later assignment
    runs an earlier one's public checks on a carried module.
    """
    parts = Parts()
    available = {**fixtures, "parts": parts}
    names = list(inspect.signature(check).parameters)
    missing = [name for name in names if name not in available]
    if missing:
        raise TypeError(f"{check.__name__} needs the fixtures {missing}; pass them to run_check")
    check(**{name: available[name] for name in names})
    if not parts.all_passed:
        raise AssertionError(parts.summary())


def forward_backward(module, *args, grad_output=None, **kwargs) -> dict:
    """Forward and backward through a local module or a ``RemoteObject``, with the same result shape.

    Returns ``{"output", "input_grads" (per positional arg), "param_grads" ({name: grad})}``.
    """
    if isinstance(module, RemoteObject):
        return module.forward_backward(*args, grad_output=grad_output, **kwargs)
    return calls.forward_backward(module, args, kwargs, grad_output)


def read(obj, attribute: str):
    """Read an attribute of a local object or a ``RemoteObject`` (``read(model, "training")``)."""
    if isinstance(obj, RemoteObject):
        return getattr(obj, attribute).get()
    return getattr(obj, attribute)


def derive_seed(*parts: object) -> int:
    """A stable 31-bit seed from any parts (test id, secret, ...)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
