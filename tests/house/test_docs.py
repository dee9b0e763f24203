"""README.md and docs/*.md: no broken relative link, and a README that stays a landing page.

Every Markdown link or image whose target is not a web or mail address must name a file of the repository; a link to
a heading (`page.md#anchor`, or `#anchor` in the same page) must name a heading that exists, spelled as GitHub spells
its anchors. README.md keeps at most 150 lines and opens with the two commands that work on a fresh machine (a
script reads the test command from there). A table with a "tested in" column (docs/architecture.md's modules) names
in each row, in backquotes, the test files or folders under tests/ that check it, and each one exists. Reads files
only: no network, no harness.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 150

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+).*?\1")
# [text](target "title") and ![alt](<target>): the text may hold one level of brackets, the title any quotes.
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]"              # [text] or ![alt]
    r"\(\s*(<[^>]*>|[^)\s]+)"                      # (target or (<target>
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)"  # an optional title, then )
)
# [label]: target, a reference definition.
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
EXTERNAL = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
TESTED_IN = "tested in"


def prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)[0]
            continue
        if fence is not None:
            if opened and opened.group(1)[0] == fence:
                fence = None
            continue
        lines.append((number, line))
    return lines


def links(text: str) -> list[tuple[int, str]]:
    found = []
    for number, line in prose_lines(text):
        line = INLINE_CODE.sub("", line)
        targets = [match.group(1) for match in INLINE_LINK.finditer(line)]
        reference = REFERENCE.match(line)
        if reference:
            targets.append(reference.group(1))
        found += [(number, target.strip("<>")) for target in targets]
    return found


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered, lower case, without punctuation, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; GitHub numbers a repeated one: name, name-1, name-2, ..."""
    found: set[str] = set()
    repeats: dict[str, int] = {}
    for _, line in prose_lines(page.read_text(encoding="utf-8")):
        heading = HEADING.match(line)
        if heading:
            base = anchor(heading.group(2))
            count = repeats.get(base, 0)
            repeats[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """Every relative link of ``page`` that names no file, or no heading of the page it names."""
    problems = []
    for number, target in links(page.read_text(encoding="utf-8")):
        if EXTERNAL.match(target):
            continue
        path, _, fragment = target.partition("#")
        where = f"{page.relative_to(ROOT)}:{number}: {target}"
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"{where}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            problems.append(f"{where}: no heading with the anchor #{fragment} in {file.relative_to(ROOT)}")
    return problems


def check_tested_in(page: Path) -> tuple[int, list[str]]:
    """The rows of ``page``'s tables with a "tested in" column, and every row there that names no test or a test
    that ``tests/`` does not hold (a file, or a folder written with its final ``/``)."""
    rows, problems, column = 0, [], None
    for number, line in prose_lines(page.read_text(encoding="utf-8")):
        if not line.startswith("|"):
            column = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if column is None:
            column = cells.index(TESTED_IN) if TESTED_IN in cells else -1
            continue
        if column < 0 or all(set(cell) <= set("-: ") for cell in cells):
            continue
        rows += 1
        where = f"{page.relative_to(ROOT)}:{number}: {cells[0]}"
        named = re.findall(r"`([^`]+)`", cells[column]) if column < len(cells) else []
        if not named:
            problems.append(f"{where}: names no test")
        for name in named:
            path = ROOT / "tests" / name
            if not (path.is_dir() if name.endswith("/") else path.is_file()):
                problems.append(f"{where}: tests/{name}: no such {'folder' if name.endswith('/') else 'file'}")
    return rows, problems


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_relative_links_resolve(page):
    assert not broken_links(page), "\n".join(broken_links(page))


def test_each_module_of_the_architecture_names_tests_that_exist():
    rows, problems = check_tested_in(ROOT / "docs" / "architecture.md")
    assert rows >= 60, f"docs/architecture.md's module tables have {rows} rows with a tested-in column"
    assert not problems, "\n".join(problems)
    assert not [problem for page in PAGES for problem in check_tested_in(page)[1]]


def test_the_tested_in_check_catches_a_missing_test(tmp_path, monkeypatch):
    """A row naming no test, a file or a folder that tests/ lacks, and a file named as a folder are reported; a table
    without the column, and rows naming what exists, are not."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "tests" / "role").mkdir(parents=True)
    (tmp_path / "tests" / "role" / "test_kept.py").write_text("")
    page = tmp_path / "page.md"
    page.write_text(
        "| module | tested in |\n| --- | --- |\n| `kept.py` | `role/test_kept.py`, `role/` |\n"
        "| `none.py` | nothing yet |\n| `gone.py` | `role/test_gone.py` |\n| `moved.py` | `other/` |\n"
        "| `file.py` | `role/test_kept.py/` |\n\n| module | what |\n| --- | --- |\n| `free.py` | `anything.py` |\n",
        encoding="utf-8")
    rows, problems = check_tested_in(page)
    assert rows == 5 and [problem.split(": ", 1)[1] for problem in problems] == [
        "`none.py`: names no test",
        "`gone.py`: tests/role/test_gone.py: no such file",
        "`moved.py`: tests/other/: no such folder",
        "`file.py`: tests/role/test_kept.py/: no such folder",
    ], problems


def test_readme_is_a_landing_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines, at most {README_MAX_LINES}: details belong in docs/")


def test_readme_opens_with_the_two_commands():
    """The title, then a code block whose first two commands are the ones that work on a fresh machine."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# "), "README.md starts with its title"
    start = next(i for i, line in enumerate(lines) if FENCE.match(line))
    assert not any(line.startswith("## ") for line in lines[:start]), "the commands come before any section"
    block = []
    for line in lines[start + 1:]:
        if FENCE.match(line):
            break
        command = line.split("#", 1)[0].strip()
        if command:
            block.append(" ".join(command.split()))
    assert block[:2] == ["make demo", "make test"], block


def test_the_checks_catch_breakage(tmp_path, monkeypatch):
    """A missing file and a missing heading are both reported; a present heading (repeated, or holding code and
    punctuation), a web address and a link inside code are not."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "other.md").write_text(
        "# Other\n\n## GPU (H100)\n\n### What `grade` writes\n\n## Notes\n\n## Notes\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#gpu-h100) [ok](other.md#what-grade-writes) [ok](other.md#notes-1) [ok](#page)\n"
        "[web](https://example.com/x.md) `[code](ignored.md)` [ok](<other.md> \"title\")\n"
        "![image](missing.png) [gone](missing.md) [bad anchor](other.md#nowhere) [bad here](#nowhere)\n"
        "```\n[in code](ignored.md)\n```\n",
        encoding="utf-8",
    )
    found = broken_links(page)
    assert [problem.split(": ", 1)[1] for problem in found] == [
        "missing.png: no such file",
        "missing.md: no such file",
        "other.md#nowhere: no heading with the anchor #nowhere in other.md",
        "#nowhere: no heading with the anchor #nowhere in page.md",
    ], found
