"""Assertions for graded tests, with failure messages written for students.

``assert_close(got, expected)`` compares at a tolerance chosen from the expected dtype and, on a
mismatch, says where (shape, first bad index, max error, NaN/inf). When ``expected`` is an ``Expected``
from the oracle, a failed comparison also notes which known mistakes the output matches; the test names one
(``named_mistake``) only when every comparison it failed matched it, so that a mistake is never named from one
coincidence while another check points elsewhere. Every check runs in the
trusted parent on values decoded from the worker, so nothing a submission does to torch or
numpy inside its own process can change the outcome.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from autograder.oracle import Expected

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


def start_test() -> None:
    """Forget the failed comparisons of the previous test."""
    _FAILED.clear()


def named_mistake() -> str | None:
    """The known mistake that every failed comparison of this test matched (the first of them), if any."""
    if not _FAILED:
        return None
    common = [d for d in _FAILED[0] if all(d in matched for matched in _FAILED[1:])]
    return common[0] if common else None


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


def recognise(got: Any, expected: Expected, *, rtol: float | None = None, atol: float | None = None) -> None:
    """Note which known mistakes ``got`` matches, as a failed ``assert_close`` does, for a check that failed on a
    property rather than on the reference's value (a dropout mask, a sampler's statistics): the property decides the
    points, since a correct answer may differ from the reference's, and this only lets the feedback name a mistake."""
    _FAILED.append(_matching(got, expected, rtol, atol))


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
    raise AssertionError(
        f"{what}: {int((~close).sum())} of {close.numel()} entries differ from the expected values "
        f"(rtol={rtol:g}, atol={atol:g}).\n"
        f"  first at index {first}: yours {float(g[first]):.6g}, expected {float(w[first]):.6g}\n"
        f"  largest error {float(error[worst]):.3g} at index {worst}"
    )


def _first(mask: torch.Tensor) -> tuple[int, ...]:
    return _unravel(int(mask.reshape(-1).nonzero()[0, 0]), mask.shape)


def _unravel(flat: int, shape) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, tuple(shape))) if len(shape) else ()


def _matching(got: Any, expected: Expected, rtol, atol) -> list[str]:
    """The descriptions of the known mistakes whose output matches ``got``, in their order."""
    found = []
    for description, value in expected.variants():
        try:
            _compare(got, value, "", rtol, atol)
        except Exception:  # noqa: BLE001 - a variant that cannot be compared matches nothing
            continue
        found.append(description)
    return found


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
