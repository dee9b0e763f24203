"""A batch's own files, from the results of the submissions that finished (``write_batch``): the gradebook CSV, the
written answers for human graders and the summary (also printed as a table)."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder import scratch, sinks
from autograder.results import Results, points


def write_batch(collected: list[Results], out: Path) -> None:
    """The batch's own files from the results of the submissions that finished: the gradebook, the written answers
    and the summary."""
    write_gradebook([results for results in collected if results.tests], out / "gradebook.csv")
    write_manual_answers(collected, out / "manual_answers.csv")
    scratch.write_whole(out / "summary.md", summary_markdown(collected))


def ungraded(collected: list[Results]) -> list[Results]:
    """The submissions that got no grade: not recognised or refused as handed in, or the grader failed."""
    return [results for results in collected
            if results.status is not None and results.status.ungraded]


def write_gradebook(collected: list[Results], path: Path, students: dict | None = None) -> None:
    """One row per submission: totals, then one column per test (in first-seen order).

    ``students``: Gradescope's submitters by submission name (``gradescope.students``); when any submission has
    them, three columns give their names, e-mail addresses and ids (a group's joined with "; ")."""
    students = {name: found for name, found in (students or {}).items() if found}
    named = ["student_name", "student_email", "student_id"] if students else []
    columns: list[str] = []
    for results in collected:
        for test in results.tests:
            label = f"{results.assignment}:{test.number} {test.name}"
            if label not in columns:
                columns.append(label)
    path.parent.mkdir(parents=True, exist_ok=True)
    with scratch.replacing(path) as temp, open(temp, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([sinks.csv_cell(cell) for cell in ["submission", *named, "assignment", "score", "max_score",
                                                           "percent", "execution_time", *columns]])
        for results in collected:
            scores = {f"{results.assignment}:{t.number} {t.name}": t.score for t in results.tests}
            percent = 100 * results.score / results.max_score if results.max_score else 0.0
            who = students.get(results.submission, ())
            row = [results.submission, *("; ".join(getattr(s, field) for s in who) for field in
                                         ("name", "email", "id")[:len(named)]),
                   results.assignment, results.score, results.max_score,
                   f"{percent:.1f}", f"{results.execution_time:.1f}", *(scores.get(c, "") for c in columns)]
            writer.writerow([sinks.csv_cell(cell) for cell in row])


def summary_table(collected: list[Results]) -> Table:
    table = Table(title="Grading summary")
    for column, justify in [("submission", "left"), ("assignment", "left"), ("score", "right"),
                            ("passed", "right"), ("time (s)", "right"), ("status", "left")]:
        table.add_column(column, justify=justify, no_wrap=True, overflow="ellipsis",
                         max_width=60 if column in ("submission", "status") else None)
    for results in collected:
        score = f"{points(results.score)} / {points(results.max_score)}"
        table.add_row(sinks.rich_markup(sinks.line(results.submission)), results.assignment, score, passed(results),
                      f"{results.execution_time:.1f}", sinks.rich_markup(sinks.line(_status(results))))
    return table


def passed(results: Results) -> str:
    """"passed/tests" among the tests that carry points: a 0-point test (a written answer for human graders, a rule
    report, a check run elsewhere) informs and is not counted, so a submission that did not load reads 0/N."""
    scored = [test for test in results.tests if test.max_score > 0]
    return f"{sum(test.status == 'passed' for test in scored)}/{len(scored)}"


def write_manual_answers(collected: list[Results], path: Path) -> None:
    """Written answers for human graders: one row per submission and question (nothing when none)."""
    rows = [(r.submission, r.assignment, t.extra_data["question"], t.extra_data["points"], t.extra_data["answer"])
            for r in collected for t in r.tests if t.extra_data.get("manual")]
    if not rows:
        return
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["submission", "assignment", "question", "points", "answer"])
        writer.writerows([sinks.csv_cell(cell) for cell in row] for row in rows)


def _status(results: Results, limit: int = 80) -> str:
    status = str(results.extra_data.get("status", ""))
    return status if len(status) <= limit else status[: limit - 3] + "..."


def summary_markdown(collected: list[Results]) -> str:
    lines = ["| submission | assignment | score | passed | time (s) | status |", "|---|---|---|---|---|---|"]
    for results in collected:
        score = f"{points(results.score)} / {points(results.max_score)}"
        lines.append(f"| {sinks.inline(results.submission)} | {results.assignment} | {score} | {passed(results)} "
                     f"| {results.execution_time:.1f} | {sinks.inline(_status(results))} |")
    return "\n".join(lines) + "\n"


def print_summary(collected: list[Results]) -> None:
    """Print the table; logs and pipes get a wide fixed width instead of rich's default 80 columns."""
    Console(width=None if sys.stdout.isatty() else 150).print(summary_table(collected))


