"""Runtime and peak memory of student code, as ratios to the reference measured in the same run.

    comparison = timing.compare(student_module, reference_module, inputs, device=device,
                                what="CausalSelfAttention forward, x (8, 256, 128)")
    timing.check(comparison, max_time_ratio=5, max_memory_ratio=4)

Both sides run in sandboxed workers with the same limits and thread count (the reference in a worker of
its own: the ``reference_student`` fixture), in alternating rounds, so that load from elsewhere on the
machine hits both alike. The time verdict compares each side's fastest round: load from elsewhere only ever
adds time, and on a shared grader even a median of a few millisecond-long calls is hit by it (the reference can
measure many times slower than itself); peak memory, which load does not change, compares medians.
A time verdict must not depend on what else the machine is doing, so a ratio over the limit is only believed when
it is decisive: while it is over but within ``DECISIVE`` times the limit, or either side's rounds are spread (one
was slowed), more rounds are run (up to ``MAX_BATCHES`` batches) and the fastest of all of them compared; a slow
implementation stays slow in every round and is decided at once. Each round sends fresh inputs, so a cache keyed
on the input cannot help. Nothing a submission's process
reports is trusted: time is the parent's wall clock around an ordinary call, whose output is compared with the
reference's on the same inputs (an answer given early, or a different one when the call seems to be timed, fails
the test), and the peak memory is read by the parent from outside the worker (``Student.measure``). The pipe's
overhead (the output included) is the same on both sides and pulls ratios towards 1, so inputs should be large
enough that the call itself takes milliseconds. Absolute budgets belong to named
devices only; here everything is relative.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from autograder.grading.api import assert_close
from autograder.grading.proxy import RemoteAttr

# Below this peak (bytes) the reference's figure is mostly allocator noise: memory is compared with slack.
MEMORY_FLOOR = 4 << 20
# A ratio this many times over the limit, from rounds whose median is within NOISY of their fastest, is decided.
DECISIVE, NOISY, MAX_BATCHES = 2.0, 1.5, 4


@dataclass
class Side:
    """One side's measurements: seconds per round and peak bytes per round (``None`` where unreadable)."""

    seconds: list[float] = field(default_factory=list)
    peaks: list[int | None] = field(default_factory=list)

    @property
    def best_seconds(self) -> float:
        return min(self.seconds)

    @property
    def spread(self) -> float:
        """The median round over the fastest: near 1 when no round was slowed by load from elsewhere."""
        return statistics.median(self.seconds) / max(min(self.seconds), 1e-9)

    @property
    def median_peak(self) -> int | None:
        known = [p for p in self.peaks if p is not None]
        return int(statistics.median(known)) if known else None


@dataclass
class Comparison:
    """The student's and the reference's measurements of the same call on the same inputs."""

    what: str
    device: str
    student: Side
    reference: Side

    @property
    def time_ratio(self) -> float:
        return self.student.best_seconds / max(self.reference.best_seconds, 1e-9)

    @property
    def memory_ratio(self) -> float | None:
        mine, theirs = self.student.median_peak, self.reference.median_peak
        if mine is None or theirs is None:
            return None
        return mine / max(theirs, MEMORY_FLOOR)

    def undecided(self, max_time_ratio: float) -> bool:
        """Over the limit, but not by a margin that load from elsewhere could not explain."""
        ratio = self.time_ratio
        return max_time_ratio < ratio and (ratio < DECISIVE * max_time_ratio or self.student.spread > NOISY
                                           or self.reference.spread > NOISY)


Inputs = Callable[[int], tuple[tuple, dict]]


def compare(student: RemoteAttr, reference: RemoteAttr, inputs: Inputs, *, what: str, device: str = "cpu",
            rounds: int = 5, max_time_ratio: float | None = None) -> Comparison:
    """Measure ``student(*args, **kwargs)`` against ``reference(...)`` over ``rounds`` alternating rounds, and
    batches of ``rounds`` more while the verdict at ``max_time_ratio`` (when given) is undecided.

    ``inputs(round)`` returns ``(args, kwargs)`` for that round (round -1 is the untimed warm-up that
    loads both workers and lets lazy initialisation happen outside the stopwatch). Every round's outputs must
    agree (``same_answer``).
    """
    sides = (Side(), Side())
    comparison = Comparison(what=what, device=device, student=sides[0], reference=sides[1])
    _rounds(student, reference, inputs, sides, what, device, range(-1, rounds))
    for batch in range(1, MAX_BATCHES):
        if max_time_ratio is None or not comparison.undecided(max_time_ratio):
            break
        _rounds(student, reference, inputs, sides, what, device, range(batch * rounds, (batch + 1) * rounds))
    return comparison


def _rounds(student: RemoteAttr, reference: RemoteAttr, inputs: Inputs, sides: tuple[Side, Side], what: str,
            device: str, indices: range) -> None:
    for index in indices:
        args, kwargs = inputs(index)
        order = (0, 1) if index % 2 == 0 else (1, 0)  # neither side always goes first
        outputs = [None, None]
        for side in order:
            seconds, peak, outputs[side] = (student, reference)[side].measure(args, kwargs, device)
            if index >= 0:
                sides[side].seconds.append(seconds)
                sides[side].peaks.append(peak)
        same_answer(outputs[0], outputs[1], what, index)


def same_answer(got, expected, what: str, index: int) -> None:
    """A timed call is graded like any other: its output must be the reference's on the same inputs (to a loose
    tolerance: the numerics are graded elsewhere, this catches an answer that is not computed)."""
    try:
        assert_close(got, expected, "the output", rtol=1e-2, atol=1e-3)
    except AssertionError as exc:
        round_name = "the warm-up round" if index < 0 else f"timed round {index + 1}"
        raise AssertionError(f"{what}: in {round_name} your output differs from the reference's on the same "
                             f"inputs, so its time cannot count.\n{exc}") from None


def check(comparison: Comparison, *, max_time_ratio: float | None = None,
          max_memory_ratio: float | None = None) -> None:
    """Fail, with the figures and a hint, when the student is over a given ratio (memory is skipped where the
    peak cannot be read)."""
    c = comparison
    rounds = len(c.student.seconds)
    header = (f"{c.what} on {c.device}: {rounds} runs each, yours and the reference's alternating in the same "
              "grading run; times are the fastest run, memory the median.")
    if max_time_ratio is not None and c.time_ratio > max_time_ratio:
        raise AssertionError(
            f"{header}\n  yours {_ms(c.student.best_seconds)}, the reference {_ms(c.reference.best_seconds)}: "
            f"{c.time_ratio:.1f}x slower (the limit is {max_time_ratio:g}x).\n"
            "Look for Python loops over batch items, heads or positions (use batched tensor operations), "
            "and for work repeated inside a loop that could be done once.")
    ratio = c.memory_ratio
    if max_memory_ratio is not None and ratio is not None and ratio > max_memory_ratio:
        raise AssertionError(
            f"{header}\n  your peak memory {_mb(c.student.median_peak)}, the reference's "
            f"{_mb(c.reference.median_peak)}: {ratio:.1f}x (the limit is {max_memory_ratio:g}x).\n"
            "Look for an avoidably large intermediate, such as broadcasting to (B, H, T, T, d) and summing "
            "instead of a matrix product, or copies made by .repeat where broadcasting would do.")


def grade(comparison: Comparison, parts, *, max_time_ratio: float, max_memory_ratio: float) -> None:
    """The two graded parts of a runtime test (time, then peak memory), each failing with ``check``'s words;
    a run within both limits is told its figures (``parts``: the test's ``Parts``, which also records both ratios
    for the class report)."""
    parts.figure("time ratio", comparison.time_ratio, at_most=max_time_ratio)
    parts.figure("memory ratio", comparison.memory_ratio, at_most=max_memory_ratio)
    with parts(f"time within {max_time_ratio:g}x of the reference's"):
        check(comparison, max_time_ratio=max_time_ratio)
    with parts(f"peak memory within {max_memory_ratio:g}x of the reference's"):
        check(comparison, max_memory_ratio=max_memory_ratio)
    if parts.all_passed:
        parts.note(figures(comparison))


def figures(comparison: Comparison) -> str:
    """The measurements in one line, for a student whose code is within the limits (``check`` words failures)."""
    c = comparison
    line = (f"Measured: {c.what} on {c.device}, yours {_ms(c.student.best_seconds)}, the reference "
            f"{_ms(c.reference.best_seconds)} ({c.time_ratio:.1f}x)")
    ratio = c.memory_ratio
    if ratio is not None:
        small = c.reference.median_peak < MEMORY_FLOOR
        floor = f", against {_mb(MEMORY_FLOOR)}: smaller peaks are mostly allocator noise" if small else ""
        line += (f"; peak memory {_mb(c.student.median_peak)}, the reference's {_mb(c.reference.median_peak)} "
                 f"({ratio:.1f}x{floor})")
    return line + "."


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def _mb(size: int | None) -> str:
    return "unknown" if size is None else f"{size / 2**20:.1f} MB"
