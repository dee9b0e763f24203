"""Naming a known mistake only when an experiment confirms it.

A failed test's comparisons may match one known mistake's output by coincidence (``api.matched_mistakes``): a row
maximum taken before masking gives the same all-zero rows at large scores as a mask applied after the softmax; a
RoPE exponent doubled at base 100 gives the frequencies of base 10000, as does a base ignored; queries scaled twice
give the scores of a scale by sqrt(d_model) wherever the head width is sqrt(d_model). A wrong name sends a student
to fix code that is right. So before the plugin names a mistake, it runs the student's code and the mistake's on the
suite's probes, and names the mistake only when the student's outputs match it there too.

Probes: a suite may hold ``probes.py`` with ``PROBES``, a list of ``Probe(function, label, fn)``. ``fn(impl)`` calls
one student function or class on fixed inputs and returns its output, as an oracle question does (deterministic,
raising nothing on the reference): a family per function, ordinary inputs and those that tell mistakes apart (a head
width that is not sqrt(d_model), a masked key holding its row's largest score, other bases). The author writes
inputs, never which mistake they are for: that is derived, per mistake and per pair of mistakes, from the values
alone, so a mistake added to the catalogue gets its experiment without a word. For a candidate mistake M:

- every probe of every function whose output M changes (some probe where M's value is not the reference's): a
  student who made M gives M's values on all of them, also where M's agree with the reference (a base ignored
  agrees at the default base; a doubled exponent does not);
- for each other known mistake (and the reference) those probes do not tell from M, the first probe of any function
  where the two differ.

M is named only if the student's value matches M's on each of them (``api``'s comparison and tolerances; where M's
code raises, the student's must raise too). A mistake that changes no probe (its function has no family: a trainer's
schedule, a notebook's experiment) cannot be confirmed this way and is named from the failed test's comparisons
alone, as it was before probes; ``validate`` counts them (``unprobed``).

The reference's and every mistake's values on a probe come from the oracle (``Oracle.probe``): computed live (and
shared by a batch's gradings), or recorded by ``autograder build`` for a student's ``check`` and replayed; where no
value can be had (a stale recording) nothing is named. The student's values are asked once per grading, and only for
a test that would name a mistake. A probe that fails on the student's side for any reason but the student's code
raising (a timeout, a crash; all the probes' calls share ``PROBE_SECONDS`` per grading) stops confirmation for the
rest of the grading: nothing more is named, at no more cost.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.grading.oracle import Expected, Oracle
from autograder.grading.proxy import StudentError

PROBE_SECONDS = 30.0  # for all the probes' calls into the student's code in one grading (not the tests' limits)
UNCONFIRMED = ("On this test's inputs your output looks like a known mistake's, but on other inputs the grader tried "
               "it does not, so no mistake is named: the messages above say which values differ.")
RAISED = object()  # what a probe "returns" on an implementation whose code raised


@dataclass(frozen=True)
class Probe:
    """One experiment: ``fn(impl)`` calls ``function`` of the implementation ``impl`` on fixed inputs (``label``
    says which, for authors)."""

    function: str
    label: str
    fn: Callable[[Any], Any]

    @property
    def name(self) -> str:
        """What its values are recorded under: the function and the label (unique in a suite's probes)."""
        return f"{self.function}: {self.label}"


def probes_of(suite_package: str) -> list[Probe]:
    """The ``PROBES`` of ``<suite_package>.probes`` (empty where the suite has none)."""
    try:
        module = importlib.import_module(f"{suite_package}.probes")
    except ModuleNotFoundError as exc:
        if exc.name != f"{suite_package}.probes":
            raise
        return []
    return checked(list(module.PROBES), f"{suite_package}.probes")


def checked(probes: list[Probe], where: str) -> list[Probe]:
    """``probes``, refused (``ValueError``) where two share a name: their recorded values would be one."""
    names = [probe.name for probe in probes]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: two probes share a function and label: label each input apart")
    return probes


class Confirmation:
    """Confirms candidate mistakes for one grading: ``student`` (the proxy), ``oracle`` (the values of the reference
    and of the known mistakes) and ``probes``; ``same(got, wanted)`` says whether two values match (``api``)."""

    def __init__(self, student, oracle: Oracle, probes: list[Probe], same: Callable[[Any, Any], bool]):
        self.student, self.oracle, self.probes, self.same = student, oracle, probes, same
        self._expected: dict[int, Expected | None] = {}
        self._students: dict[int, Any] = {}
        self._stopped = False
        self._left = PROBE_SECONDS
        self._chosen: dict[str, list[int] | None] = {}
        self.unprobed: set[str] = set()  # candidates that changed no probe: named on the test alone

    def confirms(self, mistake: str) -> bool:
        """Whether the student's outputs match ``mistake``'s on the probes that tell it apart (module docstring);
        True where no probe shows it (it changes none)."""
        if not self.probes:
            self.unprobed.add(mistake)
            return True
        if mistake not in self._chosen:
            self._chosen[mistake] = self.chosen(mistake)
        chosen = self._chosen[mistake]
        if chosen is None:
            return False
        if not chosen:
            self.unprobed.add(mistake)
            return True
        for index in chosen:
            wanted = self._value(index, mistake)
            got = self._student_value(index)
            if got is None or (wanted is RAISED) != (got is RAISED) or (
                    wanted is not RAISED and not self.same(got, wanted)):
                return False
        return True

    def record(self) -> None:
        """Ask the oracle every probe (in its ``record`` mode: so that they are recorded)."""
        for index in range(len(self.probes)):
            self._expected_for(index)

    def chosen(self, mistake: str) -> list[int] | None:
        """The probes (indices) that confirm ``mistake``: empty when it changes none; None when their values cannot
        be had."""
        differs: set[str] = set()
        for index, probe in enumerate(self.probes):
            expected = self._expected_for(index)
            if expected is None:
                return None
            if self._differ(self._value(index, mistake), expected.value):
                differs.add(probe.function)
        if not differs:
            return []
        chosen = [i for i, probe in enumerate(self.probes) if probe.function in differs]
        others = dict.fromkeys(d for i in range(len(self.probes)) for d, _ in self._expected_for(i).variants()
                               if d != mistake)
        for other in [None, *others]:  # None: the reference
            if any(self._differ(self._value(i, mistake), self._value(i, other)) for i in chosen):
                continue
            separator = next((i for i in range(len(self.probes))
                              if self._differ(self._value(i, mistake), self._value(i, other))), None)
            if separator is not None:
                chosen.append(separator)
        return chosen

    def _differ(self, a: Any, b: Any) -> bool:
        if a is RAISED or b is RAISED:
            return (a is RAISED) != (b is RAISED)
        return not self.same(a, b)

    def _expected_for(self, index: int) -> Expected | None:
        if index not in self._expected:
            try:
                probe = self.probes[index]
                self._expected[index] = self.oracle.probe(probe.fn, probe.name)
            except Exception:  # noqa: BLE001 - the reference cannot answer (or the recording lacks it): no value
                self._expected[index] = None
        return self._expected[index]

    def _value(self, index: int, description: str | None) -> Any:
        """The reference's value on probe ``index`` (``description`` None) or that known mistake's (``RAISED``
        where its code raised: the oracle leaves out a mistake that cannot answer)."""
        expected = self._expected_for(index)
        if expected is None:
            return RAISED
        if description is None:
            return expected.value
        return next((value for known, value in expected.variants() if known == description), RAISED)

    def _student_value(self, index: int) -> Any:
        """The student's value on probe ``index`` (``RAISED`` where their code raised; None where it could not be
        had: the confirmation stops)."""
        if index not in self._students and (self._stopped or self._left <= 0):
            self._stopped = True
            return None
        if index not in self._students:
            deadline, started = self.student.deadline, time.monotonic()
            self.student.deadline = started + self._left
            try:
                self.student.seed(0)  # as the oracle seeds each implementation: a mistake may draw (dropout left on)
                self._students[index] = self.probes[index].fn(self.student)
            except StudentError:
                self._students[index] = RAISED
            except Exception:  # noqa: BLE001 - a timeout, a crash, a grader problem: name nothing more
                self._stopped = True
                return None
            finally:
                self.student.deadline = deadline
                self._left -= time.monotonic() - started
        return self._students[index]
