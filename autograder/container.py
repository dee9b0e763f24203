"""Gradescope's container: the sizes it offers, the settings each assignment needs there (a measured table), and what
a grading says when the container's memory or time ran out.

Gradescope runs ``run_autograder`` in a Docker container of the size the assignment's "Autograder Settings" name:
by default half a virtual CPU and 768 MB ("Killed" past it), for at most the assignment's timeout (10 minutes by
default, 40 at most; past it the student gets 0 and sees no test). Its documentation names the default and says
both can be raised; ``SIZES`` are the CPU and memory pairs its settings offer, each a doubling of the default.

``gradescope_settings.toml`` (beside this module, and so in every autograder zip) holds, per assignment, the
smallest size at which ``bench/gradescope_sizes.py`` measured the reference graded at full marks in the simulated
container (``autograder.authoring.simulation``), the timeout to set, and what was measured (peak memory, seconds).
``autograder dist gradescope`` prints them and writes them into the zip's README; ``run_autograder`` stops grading
``GRADESCOPE_MARGIN`` seconds before that timeout, so that the student always gets results.

When the container's memory or time runs out, the grading did not finish and the score is not a grade:
``did_not_finish`` rewrites the results to say so first, to the student (not their fault), with every test at zero,
and tells the course staff in the autograder output (which only they see) which setting to raise.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from autograder import sinks
from autograder.results import Results, Status

SETTINGS_FILE = Path(__file__).with_name("gradescope_settings.toml")
SIZES = ((0.5, 768), (1.0, 1536), (2.0, 3072), (4.0, 6144))  # (CPUs, memory MB): the default, then each doubling
DEFAULT_TIMEOUT_MIN, MAX_TIMEOUT_MIN = 10, 40
GRADESCOPE_MARGIN = 60  # seconds the driver leaves of Gradescope's timeout (container start, writing, upload)
TIMEOUT_FACTOR = 3  # the timeout set: this many times the reference's measured grading (a wrong submission's tests
# wait out their time limits), with the margin, in whole minutes, at least the default


@dataclass(frozen=True)
class Settings:
    """What to set in an assignment's Gradescope "Autograder Settings", and what it was measured from."""

    cpus: float
    memory_mb: int
    timeout_min: int
    peak_mb: float | None = None  # the simulated container's peak memory, grading the reference at this size
    seconds: float | None = None  # and its time, start to results
    measured: str = ""  # when, where, with what

    @property
    def budget(self) -> int:
        """Seconds after which ``run_autograder`` stops the grading: the timeout less ``GRADESCOPE_MARGIN``."""
        return self.timeout_min * 60 - GRADESCOPE_MARGIN

    def line(self) -> str:
        """The settings as an instructor types them into Gradescope."""
        return f"{self.cpus:g} CPU, {size_label(self.memory_mb)} memory, {self.timeout_min} minutes timeout"


def size_label(memory_mb: int) -> str:
    return f"{memory_mb} MB" if memory_mb < 1024 else f"{memory_mb / 1024:g} GB"


def timeout_for(seconds: float) -> int:
    """The timeout (whole minutes, between Gradescope's default and its maximum) for a reference graded in
    ``seconds``."""
    needed = -(-(seconds * TIMEOUT_FACTOR + GRADESCOPE_MARGIN) // 60)
    return int(min(MAX_TIMEOUT_MIN, max(DEFAULT_TIMEOUT_MIN, needed)))


def settings(name: str, path: Path = SETTINGS_FILE) -> Settings:
    """The measured settings of assignment ``name``; Gradescope's defaults where the table has none."""
    table = tomllib.loads(path.read_text()) if path.is_file() else {}
    entry = table.get(name)
    if entry is None:
        return Settings(*SIZES[0], DEFAULT_TIMEOUT_MIN, measured="not measured: Gradescope's defaults")
    return Settings(**entry)


def table(names: list[str], path: Path = SETTINGS_FILE) -> str:
    """The settings of ``names`` as docs/instructors.md shows them (``tests/end_to_end/test_gradescope.py`` checks it
    does)."""
    rows = ["| assignment | CPU | memory | timeout | measured peak | measured time |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name in names:
        stated = settings(name, path)
        peak = f"{stated.peak_mb:.0f} MB" if stated.peak_mb is not None else "not measured"
        seconds = f"{stated.seconds:.0f} s" if stated.seconds is not None else "not measured"
        rows.append(f"| {name} | {stated.cpus:g} | {size_label(stated.memory_mb)} | {stated.timeout_min} min | {peak} "
                    f"| {seconds} |")
    return "\n".join(rows)


def next_size(memory_mb: int | None) -> tuple[float, int] | None:
    """The smallest of ``SIZES`` with more memory than ``memory_mb`` (None: there is none)."""
    return next((size for size in SIZES if memory_mb is None or size[1] > memory_mb), None)


def out_of_memory(limit: int | None, stated: Settings) -> tuple[str, str]:
    """(what the student reads, what the staff read) when the container's memory ran out at ``limit`` bytes."""
    held = round(limit / 2**20) if limit else stated.memory_mb
    bigger = next_size(held)
    advice = (f"raise the assignment's Autograder Settings to {bigger[0]:g} CPU, {size_label(bigger[1])}"
              if bigger else "ask Gradescope for a larger container")
    return (f"the autograder's container ran out of memory ({size_label(held)})",
            f"grading did not finish: the container ran out of memory at {size_label(held)} (this zip was measured "
            f"to need {stated.line()}); {advice}, then regrade")


def out_of_time(budget: int, stated: Settings) -> tuple[str, str]:
    """(what the student reads, what the staff read) when ``run_autograder`` stopped the grading after ``budget`` s."""
    minutes = -(-(budget + GRADESCOPE_MARGIN) // 60)
    return (f"the autograder's time ran out ({budget} s)",
            f"grading did not finish: run_autograder stopped it after {budget} s, {GRADESCOPE_MARGIN} s before a "
            f"{minutes}-minute Gradescope timeout; raise timeout_min in gradescope_settings.toml above {minutes} "
            f"minutes and the assignment's autograder timeout with it (this zip was measured to need "
            f"{stated.line()}), upload the zip built then, and regrade")


def did_not_finish(results: Results, student: str, staff: str) -> Results:
    """``results`` as a grading that did not finish because of ``student`` (the container's reason, as the student
    reads it): said on the first line, every test at zero (a partial score is not a grade), the staff's note in
    ``extra_data``."""
    note = (f"Grading did not finish: {student}. This is not your fault, and the score shown is not your grade. "
            "Resubmit later, or tell the course staff: they can see what happened and regrade it.")
    results.output = "\n\n".join(part for part in (note, results.output) if part)
    for test in results.tests:
        if test.score:
            test.output = f"Not counted: grading did not finish.\n\n{test.output}".strip()
        test.score = 0.0
    results.set_status(Status.GRADER_FAILED, sinks.line(staff))
    results.extra_data["staff"] = staff
    return results
