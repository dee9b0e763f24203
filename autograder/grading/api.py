"""What a graded test is written with: the ``graded`` decorator, partial credit, the assertions that compare what
the student's code returned, and helpers that work the same on the student proxy and on a local implementation.

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

Assertions, with failure messages written for students: ``assert_close(got, expected)`` compares at a tolerance
chosen from the expected dtype and, on a mismatch, says where (shape, first bad index, max error, NaN/inf). When
``expected`` is an ``Expected`` from the oracle, a failed comparison also notes which known mistakes the output
matches; the test names one (``named_mistake``) only when every comparison it failed matched it, so that a mistake
is never named from one coincidence while another check points elsewhere. Every check runs in the trusted parent on
values decoded from the worker, so nothing a submission does to torch or numpy inside its own process can change
the outcome.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import re
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import torch

from autograder import calls
from autograder.grading.oracle import Expected
from autograder.grading.proxy import RemoteObject, StudentCodeFailure
from autograder.results import VISIBILITIES

__all__ = ["graded", "Parts", "run_check", "forward_backward", "derive_seed", "read", "assert_close",
           "assert_tensor", "assert_rows_sum_to_one", "recognise"]

# (rtol, atol) per dtype: float32 leaves room for a different but valid order of operations.
TOLERANCES = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
}
# (rtol, atol) for Python floats (a loss, a rate, a distance): computed in float64 but often through float32 tensors,
# and the absolute floor lets a value that is zero up to rounding (4e-16 on one CPU, 9e-16 on another) match.
FLOAT_TOLERANCE = (1e-6, 1e-9)


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    return TOLERANCES.get(dtype, (0.0, 0.0))


def describe_type(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a {value.dtype} tensor of shape {tuple(value.shape)}"
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"a {type(value).__name__}"


def assert_tensor(value: Any, what: str, *, shape: tuple | None = None, dtype: torch.dtype | None = None) -> None:
    """Fail unless ``value`` is a plain tensor (of ``shape`` and ``dtype`` when given)."""
    if not isinstance(value, torch.Tensor):
        raise AssertionError(f"{what}: expected a torch.Tensor, but your code returned {describe_type(value)}.")
    cls = getattr(value, "remote_meta", {}).get("cls", "Tensor")
    if cls not in ("Tensor", "Parameter"):
        raise AssertionError(f"{what}: your code returned a {cls}, a tensor subclass; return a plain torch.Tensor.")
    if shape is not None and tuple(value.shape) != tuple(shape):
        raise AssertionError(f"{what}: shape {tuple(value.shape)}, expected {tuple(shape)}.")
    if dtype is not None and value.dtype != dtype:
        hint = " (a mask is a boolean tensor: True where attending is allowed)" if dtype == torch.bool else ""
        raise AssertionError(f"{what}: dtype {value.dtype}, expected {dtype}{hint}.")


_FAILED: list[list[str]] = []  # per failed comparison of the current test: the known mistakes it matched
_PASSED: list[tuple[Any, Expected, Any, Any]] = []  # its passed comparisons with an Expected, and tolerances
# How much nearer a student's value must be to a known mistake's than that mistake is to the reference's, for the
# value to match the mistake: a value a little off the reference never "matches" a mistake that is a little off too.
NAMING_MARGIN = 0.25


def start_test() -> None:
    """Forget the comparisons of the previous test."""
    _FAILED.clear()
    _PASSED.clear()


def matched_mistakes(excluded: frozenset[str] = frozenset()) -> list[str]:
    """The known mistakes (but ``excluded``) that every failed comparison of this test matched, in their order; where
    several did, only those whose values also match the student's on the comparisons the test passed (the swapped
    weights of one mistake tell it from another whose output after the swap is the same)."""
    if not _FAILED:
        return []
    common = [d for d in dict.fromkeys(_FAILED[0]) if d not in excluded and all(d in m for m in _FAILED[1:])]
    if len(common) > 1:  # the passed comparisons' mistakes' values are computed only here, where they can decide
        common = [d for d in common if all(_consistent(d, *passed) for passed in _PASSED)]
    return common


def _consistent(description: str, got: Any, expected: Expected, rtol, atol) -> bool:
    """Whether the known mistake ``description`` gives ``got`` (within the tolerance) where the student's output
    matched the reference's; True where the mistake gives no value there."""
    for known, value in expected.variants():
        if known == description:
            try:
                _compare(got, value, "", rtol, atol)
            except Exception:  # noqa: BLE001 - a value it cannot be compared with is not the student's
                return False
    return True


def carried_mistake(file: str, origin: str, text: str) -> str:
    """How a known mistake in a carried file is described (``mutants.fingerprints``): the file, then the mistake."""
    return f"in your {file} (from the {origin} assignment): {text}"


def carried_file(description: str) -> str | None:
    """The carried file a known mistake's description (``carried_mistake``) puts it in, or None for the assignment's
    own files."""
    match = re.match(r"in your (\S+) \(from the \S+ assignment\): ", description)
    return match.group(1) if match else None


def named_mistake(excluded: frozenset[str] = frozenset()) -> str | None:
    """The one known mistake (not among ``excluded``) that every failed comparison of this test matched; None when
    none did, or when several did: the output cannot tell them apart, so naming one would guess, and the comparison's
    message already says which values differ."""
    common = matched_mistakes(excluded)
    return common[0] if len(common) == 1 else None


def same_value(got: Any, wanted: Any) -> bool:
    """Whether ``got`` matches ``wanted`` as ``assert_close`` compares them (the expected dtype's tolerances)."""
    try:
        _compare(got, wanted, "", None, None)
    except Exception:  # noqa: BLE001 - a value it cannot be compared with is not the same
        return False
    return True


def assert_close(got: Any, expected: Any, what: str = "the output", *, rtol: float | None = None,
                 atol: float | None = None) -> None:
    """Compare ``got`` with ``expected`` (a value or an ``Expected``), recursing into tuples and lists."""
    wanted = expected.value if isinstance(expected, Expected) else expected
    try:
        _compare(got, wanted, what, rtol, atol)
    except AssertionError:
        if isinstance(expected, Expected):
            _FAILED.append(_matching(got, expected, rtol, atol))
        raise
    if isinstance(expected, Expected):
        _PASSED.append((got, expected, rtol, atol))


def recognise(got: Any, expected: Expected, *, rtol: float | None = None, atol: float | None = None) -> None:
    """Note which known mistakes ``got`` matches, as a failed ``assert_close`` does, without grading it: for a check
    that failed on a property rather than on the reference's value (a dropout mask, a sampler's statistics), where a
    correct answer may differ from the reference's; or for an output the test does not grade but that tells mistakes
    apart (the student's apply_rope, under a plot that calls it). Where ``got`` matches the reference's value, it
    counts as a passed comparison: the mistakes whose value differs there are not the student's."""
    try:
        _compare(got, expected.value, "", rtol, atol)
    except Exception:  # noqa: BLE001 - whatever it is, it is not the reference's value
        _FAILED.append(_matching(got, expected, rtol, atol))
    else:
        _PASSED.append((got, expected, rtol, atol))


def _compare(got: Any, wanted: Any, what: str, rtol, atol) -> None:
    if isinstance(wanted, torch.Tensor):
        assert_tensor(got, what)
        _compare_tensors(got, wanted, what, rtol, atol)
    elif isinstance(wanted, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(wanted):
            raise AssertionError(f"{what}: expected a {type(wanted).__name__} of {len(wanted)} items, "
                                 f"but your code returned {describe_type(got)}.")
        for index, (g, w) in enumerate(zip(got, wanted, strict=True)):
            _compare(g, w, f"{what}[{index}]", rtol, atol)
    elif isinstance(wanted, float):
        if not isinstance(got, int | float) or isinstance(got, bool):
            raise AssertionError(f"{what}: expected a number, but your code returned {describe_type(got)}.")
        r = FLOAT_TOLERANCE[0] if rtol is None else rtol
        a = FLOAT_TOLERANCE[1] if atol is None else atol
        if not np.isclose(got, wanted, rtol=r, atol=a):
            raise AssertionError(f"{what}: {got!r}, expected {wanted!r}.")
    elif got != wanted:
        raise AssertionError(f"{what}: {got!r}, expected {wanted!r}.")


def _compare_tensors(got: torch.Tensor, wanted: torch.Tensor, what: str, rtol, atol) -> None:
    if tuple(got.shape) != tuple(wanted.shape):
        raise AssertionError(f"{what}: shape {tuple(got.shape)}, expected {tuple(wanted.shape)}.")
    if wanted.dtype == torch.bool:
        if got.dtype != torch.bool:
            raise AssertionError(f"{what}: dtype {got.dtype}; return a boolean tensor (True where allowed).")
        bad = got != wanted
        if bad.any():
            index = _first(bad)
            raise AssertionError(f"{what}: {int(bad.sum())} of {bad.numel()} entries are wrong; the first is at "
                                 f"index {index}: yours is {bool(got[index])}, expected {bool(wanted[index])}.")
        return
    if got.dtype != wanted.dtype:
        raise AssertionError(f"{what}: dtype {got.dtype}, expected {wanted.dtype} (keep the inputs' dtype).")
    default_rtol, default_atol = tolerance(wanted.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    g, w = got.double(), wanted.double()
    finite_w = torch.isfinite(w)
    nonfinite = ~torch.isfinite(g) & finite_w
    if nonfinite.any():
        index = _first(nonfinite)
        nans, infs = int(torch.isnan(g).sum()), int(torch.isinf(g).sum())
        raise AssertionError(f"{what}: {nans} NaN and {infs} infinite values where the expected values are "
                             f"finite; the first is at index {index} (expected {float(w[index]):.6g}).")
    close = torch.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return
    error = torch.where(finite_w & torch.isfinite(g), (g - w).abs(), torch.full_like(g, float("inf")))
    error = torch.where(close, torch.zeros_like(error), error)
    first, worst = _first(~close), _unravel(int(error.argmax()), g.shape)
    yours, expected = _distinct(float(g[first]), float(w[first]), rtol)
    raise AssertionError(
        f"{what}: {int((~close).sum())} of {close.numel()} entries differ from the expected values "
        f"(rtol={rtol:g}, atol={atol:g}).\n"
        f"  first at index {first}: yours {yours}, expected {expected}\n"
        f"  largest error {float(error[worst]):.3g} at index {worst}"
    )


def _distinct(got: float, wanted: float, rtol: float) -> tuple[str, str]:
    """``got`` and ``wanted`` with as many significant digits as the tolerance resolves (two beyond ``rtol``, six at
    least), and more until the two read differently: at rtol 1e-7, -2.0717712 and -2.0717695 both read -2.07177 at six
    digits, which hides the very difference that failed."""
    digits = max(6, math.ceil(-math.log10(rtol)) + 2) if rtol > 0 else 6
    while digits < 17 and f"{got:.{digits}g}" == f"{wanted:.{digits}g}":
        digits += 1
    return f"{got:.{digits}g}", f"{wanted:.{digits}g}"


def _first(mask: torch.Tensor) -> tuple[int, ...]:
    return _unravel(int(mask.reshape(-1).nonzero()[0, 0]), mask.shape)


def _unravel(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, tuple(shape))) if len(shape) else ()


def _matching(got: Any, expected: Expected, rtol, atol) -> list[str]:
    """The descriptions of the known mistakes whose output ``got`` matches, in their order: within the comparison's
    tolerance of the mistake's value, and nearer to it by ``NAMING_MARGIN`` than the mistake is to the reference's
    (a mistake whose value is the reference's, or within the tolerance of it, matches nothing)."""
    found = []
    for description, value in expected.variants():
        try:
            _compare(got, value, "", rtol, atol)
            if not _distance(got, value) <= NAMING_MARGIN * _distance(value, expected.value):
                continue
        except Exception:  # noqa: BLE001 - a variant that cannot be compared matches nothing
            continue
        found.append(description)
    return found


def _distance(a: Any, b: Any) -> float:
    """The largest absolute difference between two values of the same structure (tensors, numbers, tuples and lists
    of them; infinities and NaN equal to themselves); 0 or infinity for other values, equal or not."""
    if isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b):
        return max((_distance(x, y) for x, y in zip(a, b, strict=True)), default=0.0)
    if isinstance(a, torch.Tensor | int | float) and isinstance(b, torch.Tensor | int | float):
        x, y = torch.as_tensor(a).double(), torch.as_tensor(b).double()
        if x.shape != y.shape:
            return math.inf
        same = (x == y) | (torch.isnan(x) & torch.isnan(y))
        gap = torch.where(same, torch.zeros_like(x), (x - y).abs().nan_to_num(nan=math.inf))
        return float(gap.max()) if gap.numel() else 0.0
    return 0.0 if a == b else math.inf


def assert_rows_sum_to_one(weights: torch.Tensor, keep_rows: torch.Tensor | None = None,
                           what: str = "the weights") -> None:
    """Every row (last axis) sums to 1, except rows where ``keep_rows`` is False (which must be 0)."""
    assert_tensor(weights, what)
    sums = weights.double().sum(-1)
    target = torch.ones_like(sums) if keep_rows is None else keep_rows.double().expand_as(sums)
    atol = 1e-3 if weights.dtype in (torch.float16, torch.bfloat16) else 1e-5
    bad = ~((sums - target).abs() <= atol)  # NaN rows are bad too
    if bad.any():
        index = _first(bad)
        raise AssertionError(f"{what}: each row should sum to {float(target[index]):g}, but the row at index "
                             f"{index} sums to {float(sums[index]):.6g}; is the softmax over the last axis?")



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

    def passed(self, name: str) -> bool:
        """Whether the part ``name`` has run and passed."""
        return any(part == name and error is None for part, _, error in self.results)

    @contextmanager
    def __call__(self, name: str, weight: float = 1.0, *, requires: str | None = None) -> Iterator[None]:
        """A part: it passes when its block finishes, and whatever else happens in it scores it zero (fail closed):
        a failed check, the student's code failing, or the grader failing to check it (said as such).

        ``requires`` names an earlier part of the test that checks the output this part's property is about: a
        property (rows sum to one, norms are kept, causality) that a wrong but well-behaved output also has earns
        nothing until that output is right."""
        blocked = None if requires is None or self.passed(requires) else (
            f"not counted until the part \"{requires}\" passes: a property earns points only for an output that is "
            "right")
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
            self.results.append((name, weight, blocked))

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
