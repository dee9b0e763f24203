"""The output sinks: one escaping function per destination that a string from a submission can reach.

Names and e-mail addresses (Gradescope's metadata), file and folder names, exception messages, printed output and
written answers are the student's: each destination reads some of their characters as instructions. A terminal
obeys escape sequences (clear the screen, rewrite a line, a hyperlink); a spreadsheet runs a cell that starts with
``=``; rich reads ``[...]`` as markup (a stray ``[/bold]`` raises); Markdown turns a line into a heading or closes a
fence; HTML runs ``<script>``; matplotlib reads ``$...$`` as mathtext (and raises on what it cannot parse). Every
writer passes such a string through the function for where it goes, at the point where it goes there; the text the
grader writes around it stays as it is.

``terminal`` is the rule under all the others: what cannot be shown as text (control characters, escape sequences,
the Unicode controls that reorder a line as it is displayed) is removed, newlines and tabs are kept.
"""

from __future__ import annotations

import logging
import re

# Escape sequences whole (not just their ESC, which would leave "[2J" behind): CSI (colours, cursor, clearing),
# OSC up to BEL or ST (titles, hyperlinks) and DCS/SOS/PM/APC strings up to ST (or the line's end), in their
# two-character forms and their C1 ones, then any other ESC and the character after it.
_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"
                       r"|\x1b[PX^_][^\x1b\n]*(?:\x1b\\)?|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c\n]*(?:\x07|\x9c|\x1b\\)?"
                       r"|\x1b[ -~]?")
# C0 but tab and newline, DEL, C1, and the bidirectional controls that make a line display other than it reads.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")  # OWASP's CSV injection: a cell starting with these is a formula
# What starts emphasis, code, links, HTML, entities, headings, table cells, strikethrough or math (a backslash escapes
# any ASCII punctuation in CommonMark; the rest, as "." or "(", means nothing inside a line and is left readable). An
# underscore run inside a word ("causal_mask") cannot start or end emphasis in CommonMark, and stays as it is. A run
# starts where no underscore precedes it and matches whole (a shorter match is followed by "_", a word character):
# no possessive "_++", which Python 3.10's re lacks.
_MARKDOWN = re.compile(r"[\\`*{}\[\]<>#|~&$]|(?<!\w)_+|(?<!_)_+(?!\w)")
_BACKTICKS = re.compile(r"`+")


def terminal(text: str) -> str:
    """``text`` as a terminal shows it literally: escape sequences and control characters removed, newlines and tabs
    kept."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def line(text: str) -> str:
    """``text`` on one line, under the terminal rule: every run of whitespace, newlines included, one space (a table
    row, a log line: a newline in a name would start a row or a line of its own)."""
    return " ".join(terminal(text).split())


def csv_cell(value):
    """A CSV cell: text that a spreadsheet would read as a formula gets a leading ``'`` (OWASP's advice), also after
    leading spaces; numbers stay numbers."""
    if not isinstance(value, str):
        return value
    text = terminal(value)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA) else text


def rich_markup(text: str) -> str:
    """Text for rich markup (a table cell, a ``console.print`` string): brackets escaped, then the terminal rule."""
    from rich.markup import escape  # loaded where a rich destination is; the runner has none

    return escape(terminal(text))


def html(value):
    """HTML text (jinja's ``finalize`` in the class report: every ``{{ }}`` of the page passes here): escaped by
    markupsafe, then the terminal rule. What is HTML already (``Markup``, such as copydetect's highlighted code, whose
    code it escaped) keeps its tags and loses only what the terminal rule removes."""
    from markupsafe import Markup, escape  # loaded with the report; the runner has no HTML to write

    if isinstance(value, Markup):
        return Markup(terminal(value))
    return escape(terminal(str(value)))


def fenced(text: str) -> str:
    """Markdown: ``text`` as a fenced code block whose fence is longer than any run of backticks in it, so that
    nothing in it can close the block (and forge a heading or a score after it)."""
    body = terminal(text).strip("\n")
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{body}\n{fence}"


def inline(text: str) -> str:
    """Markdown inside a line (a heading, a sentence, a table cell), where a fence does not fit: whitespace runs
    (newlines included) become one space and the characters that mean something there are escaped, so the text
    starts no heading, emphasis, link, HTML, table cell or code span."""
    return _MARKDOWN.sub(lambda found: "".join("\\" + c for c in found[0]), line(text))


def plot_text(text: str) -> str:
    """A label for matplotlib, on one line (``line``) with every ``$`` escaped, so nothing is read as mathtext (an
    unparsable formula raises when the figure is drawn); matplotlib shows ``\\$`` as ``$``."""
    return line(text).replace("$", r"\$")


class _TerminalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal(super().format(record))


def log_handler() -> logging.Handler:
    """The commands' log handler: one message a line on stderr, under the terminal rule (log lines quote submissions'
    names, problems and errors)."""
    handler = logging.StreamHandler()
    handler.setFormatter(_TerminalFormatter("%(message)s"))
    return handler


def log_to_terminal() -> None:
    """A command's log on stderr through ``log_handler``, and Python's warnings with it: a warning prints its message
    raw otherwise, and a library's may quote what it read (a file's name, a label)."""
    logging.basicConfig(level=logging.INFO, handlers=[log_handler()])
    logging.captureWarnings(True)
