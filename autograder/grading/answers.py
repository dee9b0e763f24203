"""A submitted notebook read as data, nothing in it executed: its cells (``cells``) and its written answers for human
graders (``collect_answers``), each matched to its question by the prompt text the student cannot edit. The grading
of a submission and the class report's similarity check read notebooks this way; ``autograder.authoring.notebooks``
builds them."""

from __future__ import annotations

from pathlib import Path

from autograder.notebook_cells import ANSWER_TAG, PLACEHOLDER, NotebookUnreadable, read_notebook

MAX_ANSWER_CHARS = 20_000


class NotebookError(Exception):
    """A master notebook that cannot be built, or a student notebook that cannot be read."""


def cells(path: Path) -> list[dict]:
    """The cells of a notebook file, each with ``source`` joined into one string."""
    try:
        raw = read_notebook(str(path))["cells"]
    except NotebookUnreadable as exc:
        raise NotebookError(str(exc)) from None
    except OSError as exc:
        raise NotebookError(f"{Path(path).name} is not a readable notebook ({type(exc).__name__}: {exc})") from None
    out = []
    for cell in raw:
        if isinstance(cell, dict):
            source = cell.get("source", "")
            out.append({**cell, "source": "".join(source) if isinstance(source, list) else str(source)})
    return out


def normalise(text: str) -> str:
    text = text.replace("<!-- BEGIN QUESTION -->", "").replace("<!-- END QUESTION -->", "")
    return " ".join(text.split())


def collect_answers(notebook: Path, questions: list[dict]) -> dict[str, str]:
    """Each manual question's answer in a submitted notebook ("" when unanswered or missing)."""
    by_prompt = {q["prompt"]: q["name"] for q in questions}
    answers = {q["name"]: "" for q in questions}
    current = None
    for cell in cells(notebook):
        source = cell["source"]
        if "<!-- BEGIN QUESTION -->" in source:
            current = by_prompt.get(normalise(source))
            continue
        if "<!-- END QUESTION -->" in source:
            current = None
            continue
        tags = cell.get("metadata", {}).get("tags", []) if isinstance(cell.get("metadata"), dict) else []
        if current is not None and ANSWER_TAG in tags:
            text = source.replace(PLACEHOLDER, "").strip()
            if text:
                answers[current] = (answers[current] + "\n\n" + text).strip()[:MAX_ANSWER_CHARS]
    return answers
