"""Notebook assignments: building student notebooks with Otter Assign, checking them for leaks, and listing the
written questions for human graders.

A master notebook in ``solutions/<name>/`` follows Otter Assign's format (an ``# ASSIGNMENT CONFIG``
raw cell, ``# BEGIN QUESTION`` / ``# BEGIN SOLUTION`` / ``# BEGIN TESTS`` raw-cell blocks). ``assign``
runs ``otter assign`` and returns the student files with cell ids renumbered, so builds are
reproducible. Otter copies solution code that sits outside a solution block into the student
notebook without a warning; ``leaks`` finds every solution or hidden-test line that reached the
student files, and the build refuses to write them.

Written ("manual") questions are listed by ``manual_questions`` from the master; a submission's answers to
them are read by ``autograder.grading.answers``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from autograder import scratch
from autograder.authoring import markers
from autograder.grading.answers import ANSWER_TAG, NotebookError, cells, normalise


def assign(master: Path) -> dict[str, bytes]:
    """Run Otter Assign on ``master``; return the student files (relative name -> bytes). Otter writes the tests
    (hidden ones too) into a folder of its own in the temporary folder and never removes it: its temporary folder is
    ours, removed afterwards."""
    with scratch.folder("otter-assign") as temp:
        process = subprocess.run([sys.executable, "-m", "otter", "assign", str(master), str(temp), "--no-run-tests"],
                                 capture_output=True, text=True, check=False, env={**os.environ, "TMPDIR": str(temp)})
        if process.returncode != 0:
            raise NotebookError(f"otter assign failed on {master}:\n{process.stdout[-3000:]}{process.stderr[-3000:]}")
        student = temp / "student"
        files = {}
        for path in sorted(student.rglob("*")):
            if path.is_file():
                relative = str(path.relative_to(student))
                data = path.read_bytes()
                files[relative] = _renumber(data) if path.suffix == ".ipynb" else data
        return files


def _renumber(data: bytes) -> bytes:
    notebook = json.loads(data)
    for index, cell in enumerate(notebook.get("cells", [])):
        cell["id"] = f"cell-{index}"
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode()


def _blocks(master_cells: list[dict], begin: str, end: str) -> list[list[dict]]:
    """The cells between raw ``# BEGIN X`` and ``# END X`` cells."""
    blocks, current = [], None
    for cell in master_cells:
        first = cell["source"].strip().splitlines()[0] if cell["source"].strip() else ""
        if cell.get("cell_type") == "raw" and first.startswith(begin):
            current = []
        elif cell.get("cell_type") == "raw" and first.startswith(end):
            if current is not None:
                blocks.append(current)
            current = None
        elif current is not None:
            current.append(cell)
    return blocks


def secret_lines(master: Path) -> set[str]:
    """Lines that must never reach students: solution blocks, marked solution lines, hidden tests."""
    master_cells = cells(master)
    secret: set[str] = set()
    secret_cells: set[int] = set()
    for block in _blocks(master_cells, "# BEGIN SOLUTION", "# END SOLUTION"):
        for cell in block:  # Otter keeps the unmarked lines of a cell with markers, drops other cells whole
            marked = cell.get("cell_type") == "code" and "SOLUTION" in cell["source"]
            lines = markers.marked_solution_lines(cell["source"]) if marked else cell["source"].splitlines()
            secret |= markers.significant(lines)
            if not marked:
                secret_cells.add(id(cell))
    for block in _blocks(master_cells, "# BEGIN TESTS", "# END TESTS"):
        for cell in block:
            if cell["source"].lstrip().startswith("# HIDDEN"):
                secret |= markers.significant(cell["source"].splitlines()[1:])
                secret_cells.add(id(cell))
    for cell in master_cells:
        if cell.get("cell_type") == "code":
            secret |= markers.significant(markers.marked_solution_lines(cell["source"]))
    public = set()  # lines students legitimately see (given code that a solution also happens to contain)
    for cell in master_cells:
        if cell.get("cell_type") != "raw" and id(cell) not in secret_cells:
            public |= {line.strip() for line in markers.unmarked_lines(cell["source"])}
    return secret - public


def notebook_text(data: bytes) -> str:
    """Cell sources and the embedded tests of a notebook, one line per line."""
    notebook = json.loads(data)
    parts = []
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        parts.append("".join(source) if isinstance(source, list) else str(source))
    for test in notebook.get("metadata", {}).get("otter", {}).get("tests", {}).values():
        if isinstance(test, str):  # an exception-based test file (``ok_format: false``)
            parts.append(test)
            continue
        for suite in test.get("suites", []):
            for case in suite.get("cases", []):
                parts.append(re.sub(r"^(>>>|\.\.\.) ?", "", case.get("code", ""), flags=re.MULTILINE))
    return "\n".join(parts)


def solved(master: Path, student: bytes) -> bytes:
    """The built student notebook with every answer cell holding the master's solution, markers removed.

    What a perfect submission looks like: tests run it top to bottom with its ``grader.check`` cells, and
    examples start from it. Answer cells are matched to the master's solution cells in order.
    """
    notebook = json.loads(student)
    answers = [cell for cell in notebook.get("cells", []) if ANSWER_TAG in cell.get("metadata", {}).get("tags", [])]
    solutions = [cell for block in _blocks(cells(master), "# BEGIN SOLUTION", "# END SOLUTION") for cell in block]
    if [c["cell_type"] for c in answers] != [c.get("cell_type") for c in solutions]:
        raise NotebookError(f"{master}: the student notebook's answer cells do not line up with the master's solution "
                            "cells; rebuild it with `autograder build`")
    for answer, solution in zip(answers, solutions, strict=True):
        text = solution["source"] if solution["cell_type"] != "code" else _without_markers(solution["source"])
        answer["source"] = text.strip()
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode()


def _without_markers(source: str) -> str:
    """A master's solution code as it runs: Otter's prompt blocks and solution markers removed."""
    lines, prompt = [], False
    for line in source.splitlines():
        stripped = line.rstrip()
        if stripped.endswith("# BEGIN PROMPT"):
            prompt = True
        elif stripped.endswith("# END PROMPT"):
            prompt = False
        elif not prompt and not re.match(r"\s*# (BEGIN|END) SOLUTION", line):
            lines.append(re.sub(r"\s*# SOLUTION\b.*$", "", line))
    return "\n".join(lines)


def manual_questions(master: Path) -> list[dict]:
    """``[{"name", "points", "prompt"}]`` for every ``manual: true`` question of the master, in order."""
    master_cells = cells(master)
    questions = []
    for index, cell in enumerate(master_cells):
        text = cell["source"].strip()
        if cell.get("cell_type") != "raw" or not text.startswith("# BEGIN QUESTION"):
            continue
        config = yaml.safe_load(text.split("\n", 1)[1] if "\n" in text else "") or {}
        if not config.get("manual"):
            continue
        prompt = []
        for following in master_cells[index + 1:]:
            if following.get("cell_type") == "raw":
                break
            prompt.append(following["source"])
        points = config.get("points", 0)
        questions.append({"name": str(config["name"]), "points": float(sum(points) if isinstance(points, list)
                                                                      else points or 0),
                          "prompt": normalise("\n".join(prompt))})
    return questions


