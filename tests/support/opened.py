"""What people open, read as they read it: a terminal's text (what it would obey), a spreadsheet's cells (what it would
run), Markdown parsed by markdown-it-py (rich's parser), HTML by the standard library's parser. Shared by the tests of
the output sinks and the hostile catalogue's whole-batch check."""

from __future__ import annotations

import unicodedata
from html.parser import HTMLParser

from markdown_it import MarkdownIt

BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def unprintable(text: str) -> set[str]:
    """What a terminal would obey in ``text``: control characters (but newline and tab) and bidirectional controls."""
    return {c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t") or c in BIDI}


def formulas(rows: list[list[str]]) -> list[str]:
    """The cells a spreadsheet would run."""
    return [cell for row in rows for cell in row if cell.lstrip(" ").startswith(FORMULA)]


def tokens(markdown: str) -> list:
    return MarkdownIt("commonmark").enable("table").parse(markdown)


def shown(inline) -> str:
    """What an inline token shows: its text, without the Markdown around it."""
    return "".join(child.content for child in inline.children if child.type in ("text", "code_inline"))


def headings(markdown: str) -> list[str]:
    found = tokens(markdown)
    return [shown(found[i + 1]) for i, t in enumerate(found) if t.type == "heading_open"]


def strong(markdown: str) -> list[str]:
    """The text of every strong span."""
    texts = []
    for token in tokens(markdown):
        children = token.children or []
        for i, child in enumerate(children):
            if child.type == "strong_open":
                texts.append(children[i + 1].content)
    return texts


def html_in(markdown: str) -> list[str]:
    found = tokens(markdown)
    return [t.content for t in found if t.type == "html_block"] + [
        c.content for t in found for c in t.children or [] if c.type == "html_inline"]


def fences(markdown: str) -> list[str]:
    return [t.content for t in tokens(markdown) if t.type == "fence"]


class Elements(HTMLParser):
    """Every element and attribute of a page, and its text."""

    def __init__(self, page: str):
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.text: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}

    def handle_data(self, data):
        self.text.append(data)
