"""The class report (``report.html``) of a results folder, for course staff: ``write``, which the folder's owner
(``autograder.batch.folder.write``) calls once it has written the gradebooks, with the same results.

``autograder grade`` writes it at the end of every batch; ``autograder report RESULTS_DIR`` writes it again from
the results folder alone (after a regrade of some submissions, or for a folder graded by an older version). Per
assignment the page shows the score distribution, each test's pass rate, the named mistakes ("This looks like a known
mistake: ...", recorded in each test's ``extra_data["mistake"]``) by frequency with the submissions that made them,
the measured figures against their gates (runtime and memory ratios, the lm's accuracies; ``extra_data["figures"]``),
the submissions that were not graded or did not load and why, and the pairs of submissions whose code is
suspiciously similar beyond the starter code (``autograder.report.similarity``). It is one file: the plots are PNG
images in ``data:`` URLs and the styles are inline, so it opens offline and can be mailed or archived as is.

The similarity check needs the submissions' code, which a results folder does not keep: a grading stages a private
copy of the code and deletes it, and the results folder holds what is shown to students and staff (scores, feedback,
logs), not a second copy of every submission (zips with data files, notebooks with outputs) that would have to be
kept as private as the originals. The batch knows where each submission came from and passes it on; ``autograder
report`` takes the same paths again (``--submissions``), matched to the results by the names ``grade`` gave them.
Without them the page says how to add the check.
"""

from __future__ import annotations

import html
import logging
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from autograder import course, scratch, sinks
from autograder.batch.discovery import Job
from autograder.batch.gradebook import counts, results_in, scored, status_of
from autograder.report import plots
from autograder.results import Results, Status, points

if TYPE_CHECKING:
    from autograder.report.similarity import Pair

log = logging.getLogger("autograder.report.page")

TEMPLATE = course.PACKAGE_DIR / "templates" / "report.html"
SHOWN_PAIRS = 25  # the most similar pairs shown per assignment (with their code); the rest are counted
SHOWN_NAMES = 30  # submissions named per mistake


class ReportError(Exception):
    """The report cannot be written as asked; the message says what to do."""


@dataclass
class Figure:
    """One measured figure of one test across submissions (a runtime ratio, an accuracy), against its gate."""

    test: str
    name: str
    values: list[float] = field(default_factory=list)
    unmeasured: int = 0
    at_least: float | None = None
    at_most: float | None = None

    @property
    def gate(self) -> float | None:
        return self.at_least if self.at_least is not None else self.at_most

    @property
    def gate_words(self) -> str:
        if self.at_least is not None:
            return f"at least {self.at_least:g}"
        return f"at most {self.at_most:g}" if self.at_most is not None else "no gate"

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def within(self) -> int:
        return sum((self.at_least is None or v >= self.at_least) and (self.at_most is None or v <= self.at_most)
                   for v in self.values)


def read(out: Path) -> list[Results]:
    """The results in ``out`` (one folder per submission holding results.json), by submission name."""
    if not out.is_dir():
        raise ReportError(f"{out} is not a folder; pass the results folder that `autograder grade --out` wrote")
    collected = results_in(out)
    if not collected:
        raise ReportError(f"{out} holds no results (no <submission>/results.json); pass the folder that "
                          "`autograder grade --out` wrote")
    return collected


def jobs_for(collected: list[Results], jobs: list[Job], paths: list[Path]) -> dict[str, Job]:
    """Where each graded submission came from (its ``Job``, by name): the ``jobs`` found under ``paths`` as ``grade``
    finds them (``discovery.discovered``), matched by name."""
    graded = {r.submission for r in collected}
    found = {job.name: job for job in jobs if not job.problem and job.source.exists()}
    matched = {name: job for name, job in found.items() if name in graded}
    if not found:
        raise ReportError(f"no submissions found under {', '.join(map(str, paths))}; pass the folders or zips that "
                          "were given to `autograder grade`")
    if not matched:
        raise ReportError(f"none of the {len(found)} submissions under {', '.join(map(str, paths))} has results here; "
                          "pass the same paths that were given to `autograder grade`")
    return matched


def write(out: Path, collected: list[Results], sources: dict[str, Path] | None = None,
          similarity: bool = True) -> Path:
    """Write ``out/report.html``; return its path.

    ``sources``: each submission's folder or zip by name, for the similarity check (None: none); ``similarity``:
    False leaves the similarity check out even with ``sources`` (a stopped grading writes its report within seconds:
    the check imports torch and compares every pair)."""
    sources = {name: Path(path) for name, path in (sources or {}).items()}
    by_assignment: dict[str, list[Results]] = {}
    for results in collected:
        by_assignment.setdefault(results.assignment, []).append(results)
    sections = [_section(name, group, sources, similarity)
                for name, group in sorted(by_assignment.items(), key=_course_order)]
    page = jinja2.Environment(autoescape=True, finalize=sinks.html, undefined=jinja2.StrictUndefined).from_string(
        TEMPLATE.read_text(encoding="utf-8")).render(
        sections=sections, total=len(collected), folder=out.name, when=f"{datetime.now():%Y-%m-%d %H:%M}",
        with_sources=bool(sources), points=points, percent=lambda value: "-" if value is None else f"{value:.1f} %")
    path = out / "report.html"
    scratch.write_whole(path, page)
    return path


def _course_order(item: tuple[str, list]) -> tuple[int, str]:
    name = item[0]
    return (course.load(name).order if name in course.names() else 1 << 20, name)


def _section(name: str, group: list[Results], sources: dict[str, Path], similarity: bool = True) -> dict:
    """What the page shows for one assignment."""
    graded = [r for r in group if r.status in (None, Status.GRADED)]
    final = [r for r in group if scored(r)]  # a grading that did not finish has no score to count
    maximum = Counter(r.max_score for r in group).most_common(1)[0][0]
    percents = [100 * r.score / r.max_score if r.max_score else 0.0 for r in final]
    tests = _tests(group)
    figures = _figures(group)
    pairs: list[Pair] = []
    pairs_total = 0
    note = "Not checked: pass the graded folders or zips (`autograder report RESULTS --submissions PATHS`)."
    known = name in course.names()
    if known and sources and not similarity:
        note = ("Not checked: the grading was stopped (`autograder report RESULTS --submissions PATHS` checks it, as "
                "does `autograder grade PATHS --resume RESULTS`).")
    elif known and sources:
        from autograder.report.similarity import similar_pairs  # torch, through the notebooks' reader: when asked

        pairs, pairs_total = similar_pairs(course.load(name), {r.submission: sources[r.submission]
                                                                    for r in group if r.submission in sources},
                                           shown=SHOWN_PAIRS)
        note = ""
    elif not known:
        note = "Not checked: this assignment is not known to this installation."
    return {
        "name": name, "anchor": html.escape(name.replace(" ", "-")), "count": len(group), "graded": len(graded),
        "maximum": maximum, "mean": statistics.mean(percents) if percents else None,
        "median": statistics.median(percents) if percents else None, "statuses": counts(group),
        "score_plot": plots.histogram([r.score for r in final], xlabel=f"score (of {points(maximum)} points)",
                                      bins=min(25, max(5, len(final) // 4))) if final else "",
        "tests": tests,
        "pass_plot": plots.pass_rates([f"{t['number']} {t['name']}" for t in tests], [t["rate"] for t in tests])
        if tests else "",
        "mistakes": _mistakes(group),
        "figures": [{"figure": f, "plot": plots.histogram(f.values, xlabel=f.name, gate=f.gate,
                                                           gate_label=f"gate: {f.gate_words}")} for f in figures],
        "not_graded": [{"submission": r.submission, "status": status_of(r), "why": _first_lines(r.output)}
                       for r in group if r not in graded],
        "pairs": pairs, "pairs_total": pairs_total, "similarity_note": note,
    }


def _tests(group: list[Results]) -> list[dict]:
    """Each test that carries points, in first-seen order: how many submissions passed it, of how many."""
    rows: dict[tuple[str, str], dict] = {}
    for results in group:
        for test in results.tests:
            if test.max_score <= 0:
                continue
            row = rows.setdefault((test.number, test.name), {"number": test.number, "name": test.name,
                                                             "points": test.max_score, "passed": 0, "total": 0,
                                                             "scored": 0.0})
            row["total"] += 1
            row["passed"] += test.status == "passed"
            row["scored"] += test.score
    for row in rows.values():
        row["rate"] = row["passed"] / row["total"]
        row["mean"] = row["scored"] / row["total"]
    return list(rows.values())


def _mistakes(group: list[Results]) -> list[dict]:
    """The named mistakes, most frequent first: how many submissions made each, in which tests, and who."""
    found: dict[str, dict] = {}
    for results in group:
        for test in results.tests:
            mistake = test.extra_data.get("mistake")
            if mistake:
                entry = found.setdefault(mistake, {"mistake": mistake, "submissions": [], "tests": []})
                if results.submission not in entry["submissions"]:
                    entry["submissions"].append(results.submission)
                if test.name not in entry["tests"]:
                    entry["tests"].append(test.name)
    ranked = sorted(found.values(), key=lambda e: (-len(e["submissions"]), e["mistake"]))
    for entry in ranked:
        entry["count"] = len(entry["submissions"])
        entry["more"] = max(0, entry["count"] - SHOWN_NAMES)
        entry["submissions"] = entry["submissions"][:SHOWN_NAMES]
    return ranked


def _figures(group: list[Results]) -> list[Figure]:
    """Every recorded figure, per test and name, with the values the submissions reached."""
    figures: dict[tuple[str, str], Figure] = {}
    for results in group:
        for test in results.tests:
            for name, recorded in (test.extra_data.get("figures") or {}).items():
                figure = figures.setdefault((test.name, name), Figure(test.name, name, at_least=recorded.get(
                    "at_least"), at_most=recorded.get("at_most")))
                if recorded.get("value") is None:
                    figure.unmeasured += 1
                else:
                    figure.values.append(recorded["value"])
    return [f for f in figures.values() if f.values]


def _first_lines(text: str, lines: int = 12):
    """The first ``lines`` lines of what a student was told, as HTML: feedback is Markdown (printed output fenced,
    names escaped), shown raw it read as fences and backslashes. CommonMark without raw HTML: markdown-it escapes every
    ``<`` of the text and refuses ``javascript:`` links; a fence the cut leaves open is closed by the renderer."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    kept = text.strip().splitlines()
    shown = "\n".join(kept[:lines]) + ("\n\n..." if len(kept) > lines else "")
    return Markup(MarkdownIt("commonmark", {"html": False}).render(shown))
