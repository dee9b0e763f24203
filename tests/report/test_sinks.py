"""The output sinks (``autograder/sinks.py``): each function against the corpus of hostile strings, with the mistake
it is there to prevent shown caught by the same check; then the corpus as names, e-mail addresses, submission names,
exception messages, printed output and written answers through every writer, and what each wrote opened as its
reader opens it: CSVs parsed back, the terminal's text, rich's table, Markdown parsed (markdown-it-py, what rich
renders with), the report's HTML parsed and opened in Chromium, its figures drawn."""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
import yaml
from matplotlib.figure import Figure
from matplotlib.text import Text
from rich.console import Console
from rich.errors import MarkupError
from rich.markdown import Markdown
from support.browser import chromium
from support.opened import Elements, fences, formulas, headings, html_in, shown, strong, tokens, unprintable
from support.submissions import MASKING, REPO

from autograder import sinks
from autograder.batch import folder as batch_folder
from autograder.batch import gradebook
from autograder.batch.discovery import Job
from autograder.batch.jobs import not_graded
from autograder.grading import Parts
from autograder.grading.proxy import StudentError
from autograder.report import page
from autograder.results import Results, Status, TestResult, markdown_lines

FORGED = "```\n## [PASS] forged (10/10)\n\n**Score: 100 / 100**\n```"
CORPUS = [
    '=HYPERLINK("http://x.example","click")', "+1", "-2+3", "@SUM(A1:A2)", "\t=1+1", "\r=1+1", "  =1+1",
    "clear\x1b[2J\x1b[H", "a \x1b]8;;http://x.example\x07link\x1b]8;;\x07", "over\rwrite", "back\x08space", "nul\x00",
    "del\x7f", "c1 \x9b31m", "bell\x07", "[/]", "[bold red]loud", "[link=http://x.example]click[/link]", "trailing\\",
    FORGED, "~~~\n# forged\n~~~", "## [PASS] forged", "**Score: 100**", "__Score: 100__", "_a_ snake_case", "`````",
    "| a | b |",
    "<script>window.pwned = 1</script>", '<img src=x onerror="window.pwned = 2">', "</textarea></pre>", "&amp; &",
    r"$\frac{1}{0}$", "$$", r"\$", r"$\undefinedcommand$", "long " + "x" * 5000, "abc\u202edcba\u2066",
]
MATHTEXT = r"ratio $\frac{1}{0}$ $$ \$ $\undefinedcommand$"  # a figure's name, drawn in the report
def drawn(labels: list[str]) -> None:
    figure = Figure()
    figure.add_subplot().set_yticks(range(len(labels)), labels)
    figure.savefig(io.BytesIO(), format="png")


# ------------------------------------------------------------------ each sink, and the mistake it catches

def test_terminal_removes_what_a_terminal_obeys_and_keeps_lines():
    for text in CORPUS:
        assert not unprintable(sinks.terminal(text)), repr(text)
        assert not unprintable(text) or unprintable(text) - unprintable(sinks.terminal(text))
    assert sinks.terminal("clear\x1b[2J\x1b[Hnow") == "clearnow"  # the whole sequence, not "[2J[H" left behind
    assert sinks.terminal("a \x1b]8;;http://x.example\x07link\x1b]8;;\x07") == "a link"
    assert sinks.terminal("\x1b]0;a title that never ends\nthe next line") == "\nthe next line"
    assert sinks.terminal("c1 \x9d0;a title\x9c osc") == "c1  osc"  # the C1 form, whole: not "0;a title" left
    assert sinks.terminal("rows\n\tindented\n") == "rows\n\tindented\n"


def test_csv_cells_are_never_formulas_and_numbers_stay_numbers(tmp_path):
    def written(cells) -> list[list[str]]:
        with open(tmp_path / "cells.csv", "w", newline="") as handle:
            csv.writer(handle).writerow(cells)
        with open(tmp_path / "cells.csv", newline="") as handle:
            return list(csv.reader(handle))

    assert formulas(written(CORPUS))  # the mistake: written raw
    rows = written([sinks.csv_cell(text) for text in CORPUS])
    assert not formulas(rows)
    assert rows[0][0] == "'" + CORPUS[0] and rows[0][CORPUS.index("  =1+1")] == "'  =1+1"
    assert not any(unprintable(cell) for cell in rows[0])
    assert sinks.csv_cell(-2.5) == -2.5 and sinks.csv_cell(7) == 7 and sinks.csv_cell("12.5") == "12.5"


def test_rich_markup_shows_brackets_as_text():
    console = Console(file=io.StringIO(), width=200)
    with pytest.raises(MarkupError):  # the mistake: a student's "[/]" read as markup
        console.print("[/]")
    for text in CORPUS:
        console = Console(file=io.StringIO(), width=6000, force_terminal=False)
        console.print(f"[bold]{sinks.rich_markup(text)}[/bold]", end="", soft_wrap=True)
        assert console.file.getvalue() == sinks.terminal(text).expandtabs(), repr(text)


def test_a_fence_cannot_be_closed_from_inside():
    assert "[PASS] forged (10/10)" in headings(f"printed:\n```\n{FORGED}\n```")  # the mistake: a fixed fence
    for text in CORPUS:
        printed = f"printed:\n{sinks.fenced(text)}\nafter"
        assert headings(printed) == [] and strong(printed) == [] and html_in(printed) == [], repr(text)
        assert fences(printed) == [sinks.terminal(text).strip("\n") + "\n"], repr(text)


def test_inline_markdown_starts_nothing():
    assert "[PASS] forged (10/10)" in headings(f"# masking: {FORGED}")  # the mistake: the name in the heading raw
    for text in CORPUS:
        line = f"# masking: {sinks.inline(text)}\n\n| a | b |\n|---|---|\n| {sinks.inline(text)} | x |"
        assert len(headings(line)) == 1 and strong(line) == [] and html_in(line) == [], repr(text)
        assert sum(t.type == "td_open" for t in tokens(line)) == 2, repr(text)  # a pipe in it adds no cell
        assert shown(tokens(sinks.inline(text))[1]) == sinks.line(text), repr(text)


def test_markdown_lines_are_not_fooled_by_a_fence_inside_a_longer_one():
    body = "x\n```\ny\n~~~\nz"
    text = f"first\nsecond\n{sinks.fenced(body)}\nthird\nfourth"
    lines = markdown_lines(text).split("\n")
    assert fences(markdown_lines(text)) == [body + "\n"]  # the mistake (toggling on every ```): "y  " in the fence
    assert lines[0] == "first  " and lines[-2] == "third  "  # and no hard breaks after the fence
    assert markdown_lines(markdown_lines(text)) == markdown_lines(text)
    assert not unprintable(markdown_lines("a\x1b[2J\nb\u202ec"))


def test_html_escapes_and_keeps_what_is_html_already():
    template = "<p>{{ name }}</p><pre>{{ code|safe }}</pre>"
    raw = jinja2.Environment().from_string(template).render(name=CORPUS[-10], code="")
    assert "script" in Elements(raw).tags  # the mistake: no escaping
    environment = jinja2.Environment(autoescape=True, finalize=sinks.html)
    for text in CORPUS:
        parsed = Elements(environment.from_string(template).render(name=text, code="<span class='x'>a\x1b[2Jb</span>"))
        assert parsed.tags == {"p", "pre", "span"} and parsed.attributes == {"class"}, repr(text)
        assert "".join(parsed.text) == sinks.terminal(text) + "ab", repr(text)


def test_matplotlib_draws_dollars_as_dollars():
    with pytest.raises(ValueError):  # the mistake: a student's "$...$" read as mathtext
        drawn([r"$\undefinedcommand$"])
    drawn([sinks.plot_text(text) for text in CORPUS])
    for text in CORPUS:
        label = Text(text=sinks.plot_text(text))
        assert label._preprocess_math(label.get_text()) == (sinks.line(text), False), repr(text)  # as written


def test_the_log_handler_writes_lines_a_terminal_shows_literally():
    handler = sinks.log_handler()
    handler.setStream(io.StringIO())
    for text in CORPUS:
        handler.emit(logging.LogRecord("x", logging.ERROR, __file__, 1, "not graded: %s", (text,), None))
    assert not unprintable(handler.stream.getvalue())


def test_warnings_reach_the_terminal_through_its_sink():
    """A warning prints its message raw on stderr, unless the command routes it through the log (the mistake: a
    command that does not, shown by the same check), in an interpreter of its own (pytest records warnings)."""
    script = ("import sys, warnings\nfrom autograder import sinks\nif sys.argv[1] == 'sunk':\n"
              "    sinks.log_to_terminal()\nwarnings.warn('a name \\x1b]0;title\\x07', UserWarning)\n")
    printed = {how: subprocess.run([sys.executable, "-c", script, how], capture_output=True, text=True, check=True,
                                   cwd=REPO).stderr for how in ("raw", "sunk")}
    assert unprintable(printed["raw"]) and "a name" in printed["raw"]
    assert "a name" in printed["sunk"] and not unprintable(printed["sunk"]), printed["sunk"]


# ------------------------------------------------------------------ the corpus through every writer

def hostile_results() -> list[Results]:
    """A class whose every student-derived string is one of the corpus: submission names, exception messages and
    tracebacks (as the student's worker reports them), printed output, written answers, figure names."""
    collected = []
    for index, text in enumerate(CORPUS):
        error = StudentError("causal_mask(4)", {"type": text[:40], "message": text, "traceback": text})
        parts = Parts()
        with parts("the mask's shape"):
            raise error
        name = f"{text[:100]} {index}".replace("\x00", "").replace("/", "")  # a file's name holds neither
        results = Results(assignment="masking", submission=name, execution_time=1.0)
        results.tests = [
            TestResult(name="causal mask", number="1.1", score=0.0, max_score=2.0, status="failed",
                       output=f"{parts.summary()}\n\nYour code printed:\n{sinks.fenced(text)}",
                       extra_data={"mistake": text, "figures": {MATHTEXT: {"value": 1.0 + index, "at_most": 5}}}),
            TestResult(name="q1: written answer (2 points, graded by hand)", number="M.1", score=0.0,
                       max_score=0.0, status="passed", output=sinks.fenced(text), tags=["manual"],
                       extra_data={"manual": True, "question": "q1", "points": 2, "answer": text}),
        ]
        results.output = f"Your code could not be loaded, so no test could run:\n\n{error}"
        results.set_status(Status.DOES_NOT_LOAD, str(error).splitlines()[0])
        collected.append(results)
    return collected


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, list[Results], dict[str, Path]]:
    """The class written as a batch writes it (its folders, gradebooks, summary and report), with Gradescope's
    export metadata naming its students with the corpus and two submissions' code carrying it (a similar pair)."""
    root = tmp_path_factory.mktemp("sinks")
    out, export = root / "out", root / "export"
    collected = hostile_results()
    collected.append(not_graded(Job(f"{CORPUS[0]} refused", export / "x", "masking", problem=f"found {FORGED}"),
                                out / "refused"))
    sources, metadata = {}, {}
    for index, results in enumerate(collected[:-1]):
        folder = export / f"submission_{index}"
        folder.mkdir(parents=True)
        if index < 2:
            code = (MASKING.solution_dir / "masking.py").read_text()
            (folder / "masking.py").write_text(code + "".join(f"\n# {line}" for line in CORPUS[-12:]
                                                              for line in line.splitlines()))
        sources[results.submission] = folder
        text = CORPUS[index]
        metadata[folder.name] = {":submitters": [{":name": text, ":email": text, ":sid": text}]}
        results.write(out / f"submission_{index}")
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    jobs = [Job(name, source, "masking") for name, source in sources.items()]
    gradebook.write_batch(collected, out, students=batch_folder.who_made(out, collected, jobs))
    page.write(out, collected, sources)
    return out, collected, sources


def test_gradebooks_hold_no_formula_and_every_name(written):
    out, collected, _ = written
    for name in ("gradebook.csv", "gradebook-masking.csv", "manual_answers.csv"):
        with open(out / name, newline="") as handle:
            rows = list(csv.reader(handle))
        assert not formulas(rows), name
        assert not [cell for row in rows for cell in row if unprintable(cell)], name
        assert len(rows) == 1 + len(collected) - (name == "manual_answers.csv"), name  # the refused: no answer
    with open(out / "gradebook-masking.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["student_name"].removeprefix("'") for row in rows[:-1]] == [
        sinks.terminal(text) for text in CORPUS]
    assert all(float(row["score"]) == 0 and float(row["percent"]) == 0 for row in rows[:-1])
    assert rows[-1]["status"] == "not graded" and rows[-1]["score"] == rows[-1]["percent"] == ""


def test_feedback_shows_only_the_graders_headings_and_score(written):
    out, collected, _ = written
    for index, results in enumerate(collected[:-1]):
        feedback = (out / f"submission_{index}" / "feedback.md").read_text()
        assert not unprintable(feedback)
        assert headings(feedback) == [f"masking: {sinks.line(results.submission)}",
                                      "[FAIL] causal mask (0/2)", f"[INFO] {results.tests[1].name} (0/0)"]
        assert strong(feedback) == ["Score: 0 / 2"] and html_in(feedback) == []
        assert sinks.terminal(CORPUS[index]).strip("\n") + "\n" in fences(feedback)  # nothing of it lost
        data = json.loads((out / f"submission_{index}" / "results.json").read_text())
        for output in [data["output"], *(test["output"] for test in data["tests"])]:
            assert headings(output) == [] and strong(output) == [] and html_in(output) == []
            assert not unprintable(output)
        console = Console(file=io.StringIO(), width=120, force_terminal=True)  # what `autograder check` prints
        console.print(Markdown(feedback))
        assert not unprintable(re.sub(r"\x1b\[[0-9;]*m", "", console.file.getvalue()))  # rich's own colours aside


def test_the_refused_submission_says_why_in_its_own_line(written):
    out, _, _ = written
    feedback = (out / "refused" / "feedback.md").read_text()
    assert len(headings(feedback)) == 1 and strong(feedback) == ["Score: 0 / 0"]


def test_summary_is_one_table_row_per_submission(written, capsys):
    out, collected, _ = written
    summary = (out / "summary.md").read_text()
    assert headings(summary) == [] and strong(summary) == [] and html_in(summary) == []
    assert not unprintable(summary)
    found = tokens(summary)
    assert sum(t.type == "tr_open" for t in found) == 1 + len(collected)
    assert sum(t.type == "td_open" for t in found) == 6 * len(collected)
    gradebook.print_summary(collected)  # the table printed to the terminal: no MarkupError, nothing it obeys
    printed = capsys.readouterr().out
    assert not unprintable(printed) and "[bold red]loud 16" in printed and "## [PASS] forged (1010)" in printed
    assert len([row for row in printed.splitlines() if row.startswith("│")]) == len(collected)  # one line each


def test_the_report_shows_the_corpus_as_text(written):
    out, _, _ = written
    report = (out / "report.html").read_text()
    parsed = Elements(report)
    template = set(re.findall(r"<(\w+)", page.TEMPLATE.read_text()))
    assert parsed.tags <= template | {"span"}, parsed.tags - template  # copydetect's highlights
    assert not [name for name in parsed.attributes if name.startswith("on")]
    assert not unprintable(report)
    text = "".join(parsed.text)
    for literal in ("<script>window.pwned = 1</script>", "</textarea></pre>", "[/]", "# <script>window.pwned = 1"):
        assert literal in text, literal
    with chromium() as driver:
        driver.get((out / "report.html").as_uri())
        assert driver.execute_script("return window.pwned") is None
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert driver.execute_script("return document.querySelectorAll('script, textarea, [onerror]').length") == 0
