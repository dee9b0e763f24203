"""A synthetic class: students who each hand in a base (an assignment's reference, a bundled example or a known-wrong
mutant, ``tests/mutants``) with a student's own small edits, which change how the code reads but never what it does:
local variables renamed, comments added, independent assignments swapped. Copies of one base are what the similarity
check must find through such edits; the grader must give them the base's score.

``edited`` rewrites one Python source; ``make_class`` writes a class of any size for the course-scale bench
(``bench/scale.py``); the similarity check's test plants an edited copy in a small class.
"""

from __future__ import annotations

import ast
import io
import json
import random
import re
import shutil
import tokenize
from pathlib import Path

from autograder import course
from autograder.grading import mutants

COMMENTS = ["# shapes: (batch, heads, seq, d_k)", "# TODO: check this again", "# as in lecture", "# see the docstring",
            "# careful with the broadcasting here", "# this took me a while", "# the main step", "# sanity"]
PREFIXES = ["my_", "the_", "tmp_", "new_"]
# Calls that draw random numbers or change state: an assignment that makes one is never moved.
STATEFUL = re.compile(r"rand|drop|sampl|shuffle|choice|seed|normal|uniform|bernoulli|perm|next|append|extend|pop|"
                      r"update|insert|_$|print|step|backward|grad|train|eval|generat|write|read|open|iter|manual|add")
SKIPPED_EXAMPLES = {"infinite_loop"}  # waits out its 20 s load timeout: a bench of hundreds would wait on copies of it


def edited(source: str, rng: random.Random) -> str:
    """``source`` (Python) as another student might have typed the same code: a few independent assignments
    swapped, comments added, some local variables renamed. Source that does not parse comes back as it is."""
    try:
        for edit in (_swap, _comment, _rename):
            source = edit(source, rng)
    except (SyntaxError, tokenize.TokenError):
        pass
    return source


def _functions(tree: ast.AST) -> list[ast.FunctionDef]:
    """The functions with no function, lambda or class inside (their locals are theirs alone)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not any(isinstance(inner, nested) for inner in ast.walk(node) if inner is not node)]


def _swap(source: str, rng: random.Random) -> str:
    """Swap some pairs of adjacent assignments to plain names where neither reads or writes what the other writes
    and neither calls anything that draws random numbers or changes state."""
    lines = source.splitlines(keepends=True)
    for function in _functions(ast.parse(source)):
        body = function.body
        for first, second in zip(body, body[1:], strict=False):
            if not (_movable(first) and _movable(second) and first.end_lineno + 1 == second.lineno):
                continue
            written = {first.targets[0].id, second.targets[0].id}
            if {n.id for n in ast.walk(first.value) if isinstance(n, ast.Name)} & written or \
                    {n.id for n in ast.walk(second.value) if isinstance(n, ast.Name)} & written:
                continue
            if rng.random() < 0.7:
                a = slice(first.lineno - 1, first.end_lineno)
                b = slice(second.lineno - 1, second.end_lineno)
                lines[a.start:b.stop] = lines[b] + lines[a]
                return "".join(lines)  # one swap a file: the statements' lines have moved
    return source


def _movable(statement: ast.stmt) -> bool:
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return False
    for node in ast.walk(statement.value):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if STATEFUL.search(callee):
                return False
    return True


def _comment(source: str, rng: random.Random) -> str:
    """A comment line above some statements in function bodies."""
    lines = source.splitlines(keepends=True)
    starts = {s.lineno: s.col_offset for f in _functions(ast.parse(source)) for s in f.body[1:]
              if not isinstance(s, ast.Expr)}
    for line, column in sorted(starts.items(), reverse=True):
        if rng.random() < 0.3:
            lines.insert(line - 1, " " * column + rng.choice(COMMENTS) + "\n")
    return "".join(lines)


def _rename(source: str, rng: random.Random) -> str:
    """Some local variables of each function renamed throughout it (never a parameter, a name read in an f-string,
    an attribute or a keyword argument's name)."""
    tree = ast.parse(source)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    taken = {t.string for t in tokens if t.type == tokenize.NAME}
    renames: list[tuple[int, int, dict[str, str]]] = []
    for function in _functions(tree):
        arguments = function.args
        parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                      arguments.vararg, arguments.kwarg] if a is not None}
        declared = {name for node in ast.walk(function) if isinstance(node, (ast.Global, ast.Nonlocal))
                    for name in node.names}
        formatted = {n.id for node in ast.walk(function) if isinstance(node, ast.JoinedStr)
                     for n in ast.walk(node) if isinstance(n, ast.Name)}
        stored = sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                        - parameters - declared - formatted)
        chosen = {}
        for name in stored:
            new = rng.choice(PREFIXES) + name.lstrip("_")
            if rng.random() < 0.5 and new not in taken:
                chosen[name] = new
                taken.add(new)
        if chosen:
            renames.append((function.lineno, function.end_lineno, chosen))
    original = source.splitlines(keepends=True)
    lines = list(original)
    depth = 0
    for index, token in enumerate(tokens):
        if token.type == tokenize.OP and token.string in "([{":
            depth += 1
        elif token.type == tokenize.OP and token.string in ")]}":
            depth -= 1
        if token.type != tokenize.NAME:
            continue
        before = tokens[index - 1].string if index else ""
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if before == "." or (depth and after == "="):
            continue
        for first, last, chosen in renames:
            if first <= token.start[0] <= last and token.string in chosen:
                row, column = token.start
                text = lines[row - 1]
                # Tokens of one line are renamed left to right: count the columns the earlier renames added.
                shift = len(text) - len(original[row - 1])
                lines[row - 1] = text[:column + shift] + chosen[token.string] + text[column + shift + len(
                    token.string):]
    return "".join(lines)


def edit_folder(folder: Path, rng: random.Random) -> None:
    """Edit every Python file and every code cell that parses in ``folder`` (a submission) in place."""
    for path in sorted(folder.rglob("*.py")):
        path.write_text(edited(path.read_text(), rng))
    for path in sorted(folder.rglob("*.ipynb")):
        try:
            notebook = json.loads(path.read_text())
        except ValueError:  # a broken notebook (a bundled example's) stays broken
            continue
        for cell in notebook["cells"]:
            if cell.get("cell_type") == "code":
                text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                cell["source"] = edited(text, rng)
        path.write_text(json.dumps(notebook, indent=1))


def bases(name: str, into: Path) -> list[tuple[str, Path]]:
    """Assignment ``name``'s reference, bundled examples (but ``SKIPPED_EXAMPLES``) and mutants, each as (label,
    folder); mutants are written under ``into``."""
    assignment = course.load(name)
    found = [("reference", assignment.solution_dir)]
    for example in sorted((course.REPO_ROOT / "examples" / name).iterdir()):
        if example.is_dir() and example.name not in SKIPPED_EXAMPLES | {"reference"}:
            found.append((f"example-{example.name}", example))
    for mutant in mutants.catalog(assignment):
        found.append((f"mutant-{mutant.name}", mutant.materialize(into / mutant.name)))
    return found


def make_class(size: int, into: Path, names: list[str], seed: int = 0) -> dict[str, str]:
    """Write ``size`` submissions into ``into`` (``into/<assignment>-<number>-<base>``), spread evenly over the
    assignments ``names`` and, within each, over its bases in turn, every one with its own edits; returns each
    submission's base (``<assignment>/<label>``) by folder name."""
    rng = random.Random(seed)
    everything = {name: bases(name, into.parent / f"{into.name}-bases" / name) for name in names}
    made = {}
    for number in range(size):
        name = names[number % len(names)]
        label, base = everything[name][(number // len(names)) % len(everything[name])]
        folder = into / f"{name}-{number:04d}-{label}"
        shutil.copytree(base, folder, symlinks=False)
        edit_folder(folder, rng)
        made[folder.name] = f"{name}/{label}"
    return made
