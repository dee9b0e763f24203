"""A batch's own files, from the results of the submissions that finished (``write_batch``): the gradebook CSV, the
written answers for human graders and the summary (also printed as a table).

Every row says what became of its submission (``status_of``: graded, does not load, incomplete, stopped, not graded,
grader failed), and only a final grade shows a score (``scored``): a grading that stopped or did not finish lists the
tests that finished, but its total, which reads as a grade, is left empty. ``autograder grade`` writes these files
from every result in its results folder (``results_in``), not only from the submissions it graded this time: one
folder, one gradebook."""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder import course, scratch, sinks
from autograder.results import STOPPED, Results, Status, points, read_results

STOPPED_STATUS = "stopped"  # a grading a signal stopped (``Status.INCOMPLETE`` for ``results.STOPPED``), as rows say


def write_batch(collected: list[Results], out: Path, unstarted: list[str] | tuple[str, ...] = (),
                students: dict | None = None) -> None:
    """The batch's own files from the results of the submissions that have them: the gradebook, one per assignment
    (with ``students``, ``write_gradebook``'s, when given), the written answers and the summary; ``unstarted``: the
    submissions a stop left without any (the summary names them). ``autograder.batch.folder.write`` calls it."""
    write_gradebook(collected, out / "gradebook.csv")
    if students is not None:
        by_assignment: dict[str, list[Results]] = {}
        for results in collected:
            by_assignment.setdefault(results.assignment, []).append(results)
        for name, group in by_assignment.items():
            if name in course.names():
                write_gradebook(group, out / f"gradebook-{name}.csv", students)
    write_manual_answers(collected, out / "manual_answers.csv")
    scratch.write_whole(out / "summary.md", summary_markdown(collected, unstarted))


def results_in(out: Path) -> list[Results]:
    """Every submission's results in the results folder ``out`` (``out/<name>/results.json``), by name; [] when
    there is no such folder. Each is named by its folder (what ``grade`` named it): whatever its file says, a name
    from here is one folder of ``out``."""
    if not out.is_dir():
        return []
    collected = []
    for folder in sorted(out.iterdir()):
        results = read_results(folder / "results.json") if folder.is_dir() else None
        if results is not None:
            results.submission = folder.name
            collected.append(results)
    return collected


def status_of(results: Results) -> str:
    """What became of a submission, in one word or two: a ``Status`` value, or ``stopped`` for a grading a signal
    stopped (``incomplete`` is then kept for one that ran out of time or whose runner died)."""
    status = results.status
    if status is None:  # written before statuses were
        return Status.GRADED.value
    return STOPPED_STATUS if status is Status.INCOMPLETE and results.reason == STOPPED else status.value


def scored(results: Results) -> bool:
    """Whether the submission's score is a final grade: every test ran (graded), or it was graded as it loaded (does
    not load). ``grade --resume`` grades again whatever is not."""
    return results.status in (None, Status.GRADED, Status.DOES_NOT_LOAD)


def unfinished(results: Results) -> bool:
    """Whether grading it again may give it a final grade: it stopped, ran out of time or the grader failed (a
    submission refused as handed in is refused again)."""
    return not scored(results) and results.status is not Status.NOT_GRADED


def counts(collected: list[Results]) -> str:
    """"2 graded, 1 stopped": how many submissions have each status, in ``Status`` order."""
    found = Counter(status_of(results) for results in collected)
    order = [status.value for status in Status] + [STOPPED_STATUS]
    return ", ".join(f"{found[word]} {word}" for word in order if found[word]) or "no results"


def ungraded(collected: list[Results]) -> list[Results]:
    """The submissions that got no grade: not recognised or refused as handed in, or the grader failed."""
    return [results for results in collected
            if results.status is not None and results.status.ungraded]


def write_gradebook(collected: list[Results], path: Path, students: dict | None = None) -> None:
    """One row per submission: totals, then one column per test (in first-seen order).

    ``students``: Gradescope's submitters by submission name (``gradescope_metadata.students``); when any submission has
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
                                                           "percent", "execution_time", "status", *columns]])
        for results in collected:
            final = scored(results)  # else the total and the tests not run are left empty: no number reads as a grade
            scores = {f"{results.assignment}:{t.number} {t.name}": t.score for t in results.tests
                      if final or not t.extra_data.get("pending")}
            percent = 100 * results.score / results.max_score if results.max_score else 0.0
            who = students.get(results.submission, ())
            row = [results.submission, *("; ".join(getattr(s, field) for s in who) for field in
                                         ("name", "email", "id")[:len(named)]),
                   results.assignment, results.score if final else "", results.max_score,
                   f"{percent:.1f}" if final else "", f"{results.execution_time:.1f}", status_of(results),
                   *(scores.get(c, "") for c in columns)]
            writer.writerow([sinks.csv_cell(cell) for cell in row])


def summary_table(collected: list[Results]) -> Table:
    table = Table(title="Grading summary")
    for column, justify in [("submission", "left"), ("assignment", "left"), ("score", "right"),
                            ("passed", "right"), ("time (s)", "right"), ("status", "left")]:
        table.add_column(column, justify=justify, no_wrap=True, overflow="ellipsis",
                         max_width=60 if column in ("submission", "status") else None)
    for results in collected:
        score = _score(results)
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


def _score(results: Results) -> str:
    """The score of a final grade, of its maximum; a dash for a grading that did not finish (``scored``)."""
    return f"{points(results.score) if scored(results) else '-'} / {points(results.max_score)}"


def _status(results: Results, limit: int = 80) -> str:
    """The status, and why where it says why (a stopped grading's why is its status)."""
    word, reason = status_of(results), results.reason
    status = word if not reason or word == STOPPED_STATUS else f"{word}: {reason}"
    return status if len(status) <= limit else status[: limit - 3] + "..."


def summary_markdown(collected: list[Results], unstarted: list[str] | tuple[str, ...] = ()) -> str:
    """The summary table, then the submissions a stop left without results (``autograder grade --resume`` grades
    them and every grading that did not finish)."""
    lines = ["| submission | assignment | score | passed | time (s) | status |", "|---|---|---|---|---|---|"]
    for results in collected:
        score = _score(results)
        lines.append(f"| {sinks.inline(results.submission)} | {results.assignment} | {score} | {passed(results)} "
                     f"| {results.execution_time:.1f} | {sinks.inline(_status(results))} |")
    lines += ["", f"{counts(collected)}."]
    if unstarted:
        lines.append(f"Not started, the grading having stopped: {', '.join(map(sinks.inline, unstarted))}.")
    if unstarted or any(unfinished(results) for results in collected):
        lines.append("`autograder grade PATHS --resume RESULTS` grades what has no final grade here.")
    return "\n".join(lines) + "\n"


def print_summary(collected: list[Results]) -> None:
    """Print the table; logs and pipes get a wide fixed width instead of rich's default 80 columns."""
    Console(width=None if sys.stdout.isatty() else 150).print(summary_table(collected))


