"""Grading results: Gradescope's ``results.json`` and the per-submission ``feedback.md``, and what became of a
submission (``Status``).

The format follows Gradescope's autograder specification: top-level ``score``, ``execution_time``, ``output``,
``visibility``, ``extra_data`` and ``tests[]`` with ``name``, ``number``, ``score``, ``max_score``, ``status``,
``output``, ``visibility``, ``tags``, ``extra_data``.

``Results.write`` is the one writer of both files, always whole (``scratch.replacing``), and ``read_results`` their
one reader. Who calls it, in a submission's life: the pytest plugin after every test (``final=False``: results.json
alone, the tests not yet run at zero and marked pending, so that a grading killed by a global timeout still leaves the
scores it had); the runner once its suite ends (``autograder.grading.runner.grade_one``); the batch only where the
runner could not (``autograder.batch.jobs``: it died, overran its hard limit or was stopped before it finished,
``completed`` keeping every test it had listed; or nothing could be graded, ``not_graded``); the Ray engine's driver,
for each submission a task graded elsewhere (``autograder.batch.ray``: the results the task returned, or that say it
was lost); ``grade --resume`` for a submission whose files have a final grade under another name
(``autograder.batch.resume.copy``); and Gradescope's ``run_autograder`` once the grading ends, with the submission's
metadata applied, or where the grader itself failed (``autograder.gradescope``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

from autograder import scratch, sinks

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
FENCE = re.compile(r" {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)")  # a line that opens or closes a fenced code block


class Status(str, Enum):  # noqa: UP042 - Python 3.10, where students run check, has no StrEnum
    """What became of a submission, in the words its results, the gradebook and the summary show: the value, then
    ``": "`` and why where there is a why (``Results.set_status``), in ``extra_data["status"]``."""

    GRADED = "graded"  # every test ran (a test may still have failed)
    DOES_NOT_LOAD = "does not load"  # the submission's code raised, or ran too long, as it was imported
    INCOMPLETE = "incomplete"  # the grading stopped before every test ran (stopped, out of time, the runner died)
    NOT_GRADED = "not graded"  # nothing could run: not recognised, or refused as handed in
    GRADER_FAILED = "grader failed"  # the grader's fault, never the submission's

    @property
    def ungraded(self) -> bool:
        """Whether the submission got no grade at all (the command says so and exits with an error)."""
        return self in (Status.NOT_GRADED, Status.GRADER_FAILED)


STOPPED = "the grader was stopped"  # why a grading is INCOMPLETE when a signal stopped it


@dataclass
class TestResult:
    __test__ = False  # a result, not a pytest test class

    name: str
    number: str
    score: float
    max_score: float
    status: str
    output: str = ""
    visibility: str = "visible"
    tags: list[str] = field(default_factory=list)
    extra_data: dict = field(default_factory=dict)

    def feedback(self) -> str:
        """This test's part of a readable report (``Results.feedback``; a notebook's ``grader.check`` shows it
        alone): a heading with its mark and points, then what went wrong."""
        mark = "PASS" if self.status == "passed" else "FAIL"
        if self.max_score == 0 and self.status == "passed":
            mark = "INFO"
        note = "" if self.visibility == "visible" else f" _(visibility: {self.visibility})_"
        heading = f"## [{mark}] {self.name} ({points(self.score)}/{points(self.max_score)}){note}"
        return f"{heading}\n\n{markdown_lines(self.output)}" if self.output else heading


@dataclass
class Results:
    assignment: str
    submission: str
    tests: list[TestResult] = field(default_factory=list)
    output: str = ""
    execution_time: float = 0.0
    extra_data: dict = field(default_factory=dict)

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 4)

    def to_gradescope(self) -> dict:
        return {
            "score": self.score,
            "execution_time": round(self.execution_time, 2),
            "output": markdown_lines(self.output),
            "output_format": "md",
            "test_output_format": "md",
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "extra_data": {"assignment": self.assignment, "submission": self.submission,
                           "max_score": self.max_score, **self.extra_data},
            "tests": [{**asdict(t), "output": markdown_lines(t.output)} for t in self.tests],
        }

    @classmethod
    def from_gradescope(cls, data: dict) -> Results:
        extra = dict(data.get("extra_data", {}))
        results = cls(assignment=extra.pop("assignment", ""), submission=extra.pop("submission", ""),
                      output=data.get("output", ""), execution_time=data.get("execution_time", 0.0))
        extra.pop("max_score", None)
        results.extra_data = extra
        results.tests = [TestResult(**t) for t in data.get("tests", [])]
        return results

    @property
    def status(self) -> Status | None:
        """What became of the submission (None in results written before any was set)."""
        value = str(self.extra_data.get("status", "")).split(": ", 1)[0]
        return Status(value) if value in {s.value for s in Status} else None

    @property
    def reason(self) -> str:
        """Why, where the status says why ("" otherwise)."""
        return str(self.extra_data.get("status", "")).partition(": ")[2]

    def set_status(self, status: Status, reason: str = "") -> None:
        self.extra_data["status"] = f"{status.value}: {reason}" if reason else status.value

    def write(self, out_dir: Path, *, final: bool = True) -> None:
        """Write ``results.json`` and, when ``final``, ``feedback.md`` into ``out_dir``, each file whole (the module
        docstring says who writes, and when)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        scratch.write_whole(out_dir / "results.json", json.dumps(self.to_gradescope(), indent=2))
        if final:
            scratch.write_whole(out_dir / "feedback.md", self.feedback())

    def feedback(self) -> str:
        """A readable report: the total, load problems, then each test with what went wrong."""
        lines = [f"# {self.assignment}: {sinks.inline(self.submission)}", "",
                 f"**Score: {points(self.score)} / {points(self.max_score)}**", ""]
        device = self.extra_data.get("device")
        if device:
            lines.append(f"Graded on {device} in {self.execution_time:.1f} s.")
            lines.append("")
        if self.output:
            lines += [markdown_lines(self.output), ""]
        for test in self.tests:
            lines += [test.feedback(), ""]
        return "\n".join(lines)


def read_results(path: Path) -> Results | None:
    """A results.json file (``Results.write``'s), or None when it is missing or unreadable."""
    try:
        return parse_results(path.read_bytes())
    except OSError:
        return None


def parse_results(data: bytes | str) -> Results | None:
    """The results in the text of a results.json file, or None when it is not one (``read_results``)."""
    try:
        return Results.from_gradescope(json.loads(data))
    except (ValueError, TypeError, KeyError):
        return None


def markdown_lines(text: str) -> str:
    """``text`` as Markdown that keeps its line breaks where Gradescope and the terminal render it, without what a
    terminal would obey (``sinks.terminal``: results are shown in one by ``check`` and by whoever opens feedback.md).

    Feedback is written line by line (a failed comparison's first wrong index, then its largest error; a list of
    findings), and Markdown joins consecutive lines into one paragraph; so every line that another line follows
    ends in a hard break (two spaces). Fenced code keeps its lines anyway and is left as it is: a fence closes, as
    CommonMark says, only on a line of the same character at least as long as the one that opened it (what the
    student wrote is fenced longer than any run inside, ``sinks.fenced``). Applying this twice changes nothing
    (results are read back and written again).
    """
    lines = sinks.terminal(text).split("\n")
    fence = ""
    for index, line in enumerate(lines):
        found = FENCE.fullmatch(line)
        if fence:
            closing = found and found["fence"].startswith(fence) and not found["info"].strip()
            fence = "" if closing else fence
        elif found:
            fence = found["fence"]
        elif line.strip() and index + 1 < len(lines) and lines[index + 1].strip():
            lines[index] = line.rstrip() + "  "
    return "\n".join(lines)


def points(value: float) -> str:
    """Points as people read them: at most two decimals (partial credit of 7/12 shows as 0.58)."""
    return f"{round(value, 2):g}"
