"""The spec is the test plan: every rule a skeleton states is observed by a test, or marked untestable with a reason.

A skeleton's spec is what students read: the docstring of each function, class or method they complete (one that
holds a solution region, ``authoring.markers``) with the hints of its regions, and in a notebook each question's
cells. Each suite lists the rules of its spec in ``hidden/rules.toml`` (authoring data: it never ships to students),
one table per rule::

    [[rules]]
    id = "causal_mask.diagonal"           # unique in the suite
    in = "causal_mask"                    # the symbol (``Class.method``) or notebook question that states it
    states = "True exactly when j <= i"   # the spec's own words, found in that symbol's docstring or hints
    observed_by = ["test_causal_mask"]    # the graded tests that fail when the rule is broken (``file.py::name``
                                          # where two test files share the name)
    # or: untestable = "why no test can observe it"

``check`` reads the solutions and the suite's test files with ``ast`` (no grading, no import: milliseconds) and
reports every symbol with no rule, every rule whose words the spec no longer holds (the spec changed: so may the
rule), every rule no test observes and every test name that is not a graded test of the suite. ``autograder
validate`` prints the summary and fails on any problem (``make test`` runs it).
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from autograder import course
from autograder.authoring.markers import BEGIN, LINE

RULES_FILE = "rules.toml"
QUESTION = re.compile(r"^#\s*BEGIN QUESTION\s*\nname:\s*(\S+)", re.MULTILINE)


@dataclass
class Report:
    """What ``check`` found for one assignment: how many rules, observed and untestable, and the problems."""

    name: str
    rules: int = 0
    observed: int = 0
    untestable: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        unobserved = self.rules - self.observed - self.untestable
        return (f"{self.name}: {self.rules} spec rules, {self.observed} observed by tests, {self.untestable} marked "
                f"untestable, {unobserved} unobserved")


def _words(text: str) -> str:
    return " ".join(text.split())


def spec(assignment: course.Assignment) -> dict[str, str]:
    """The spec of each symbol students complete in ``assignment``'s own files: ``{symbol: its docstring and the
    hints of its solution regions}``, with each module's docstring (its conventions) under the module's name and
    notebook questions as symbols (their cells' text)."""
    found: dict[str, str] = {}
    for name in assignment.own_files:
        path = assignment.solution_dir / name
        if name.endswith(".ipynb"):
            found.update(_notebook_spec(path))
        else:
            found.update(_module_spec(path.read_text(), path.name))
    return found


def _module_spec(source: str, filename: str) -> dict[str, str]:
    lines = source.splitlines()
    hints = {number: (BEGIN.match(line) or LINE.match(line))["hint"]
             for number, line in enumerate(lines, start=1) if BEGIN.match(line) or LINE.match(line)}
    found = {}

    def visit(node: ast.AST, prefix: str) -> bool:
        """Record ``node``'s spec when it (or, for a class, one of its methods) holds a solution region."""
        name = f"{prefix}{node.name}"
        own = [hint for number, hint in hints.items() if node.lineno <= number <= node.end_lineno]
        methods = [visit(child, f"{name}.") for child in node.body
                   if isinstance(child, ast.FunctionDef | ast.ClassDef)] if isinstance(node, ast.ClassDef) else []
        if own or any(methods):
            found[name] = _words(" ".join([ast.get_docstring(node) or "", *own]))
            return True
        return False

    tree = ast.parse(source, filename)
    if ast.get_docstring(tree):
        found[filename.removesuffix(".py")] = _words(ast.get_docstring(tree))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            visit(node, "")
    return found


def _notebook_spec(path: Path) -> dict[str, str]:
    """Each question of a master notebook: the text of its cells from ``# BEGIN QUESTION`` to ``# END QUESTION``."""
    found, current = {}, None
    for cell in json.loads(path.read_text())["cells"]:
        text = "".join(cell["source"])
        begin = QUESTION.search(text) if cell["cell_type"] == "raw" else None
        if begin:
            current = begin[1]
            found[current] = ""
        elif current is not None and cell["cell_type"] == "raw" and "END QUESTION" in text:
            current = None
        elif current is not None:
            found[current] = _words(f"{found[current]} {text}")
    return found


def graded_tests(assignment: course.Assignment) -> dict[str, list[str]]:
    """The graded tests of the suite, by name: ``{test name: [its "file.py::name" keys]}`` (a name in two files
    has two keys)."""
    found: dict[str, list[str]] = {}
    for folder in (assignment.public_dir, assignment.hidden_dir):
        for path in sorted(folder.glob("test_*.py")) if folder.is_dir() else []:
            for node in ast.parse(path.read_text(), str(path)).body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and any(
                        "graded" in ast.unparse(decorator) for decorator in node.decorator_list):
                    found.setdefault(node.name, []).append(f"{path.name}::{node.name}")
    return found


def load(assignment: course.Assignment) -> list[dict]:
    """The rule tables of ``assignment``'s ``hidden/rules.toml`` (none when it has no such file)."""
    path = assignment.hidden_dir / RULES_FILE
    return tomllib.loads(path.read_text()).get("rules", []) if path.is_file() else []


def check(assignment: course.Assignment, rules: list[dict] | None = None) -> Report:
    """Check ``rules`` (by default the suite's table) against the spec and the suite (see the module docstring)."""
    rules = load(assignment) if rules is None else rules
    report = Report(assignment.name, rules=len(rules))
    stated, tests = spec(assignment), graded_tests(assignment)
    keys = {key for found in tests.values() for key in found}
    where = f"autograder/suites/{assignment.name}/hidden/{RULES_FILE}"
    seen, covered = set(), set()
    for rule in rules:
        rule_id = rule.get("id", "?")
        label = f"rule {rule_id!r} ({where})"
        if rule_id in seen:
            report.problems.append(f"{label}: two rules have this id; give each its own")
        seen.add(rule_id)
        symbol = rule.get("in", "")
        covered.add(symbol)
        if symbol not in stated:
            report.problems.append(f"{label}: `in = {symbol!r}` is no symbol students complete (known: "
                                   f"{', '.join(sorted(stated))})")
        elif _words(rule.get("states", "")).lower() not in stated[symbol].lower() or not rule.get("states"):
            report.problems.append(f"{label}: {symbol}'s docstring and hints no longer say {rule.get('states')!r}: "
                                   "the spec changed; update the rule (and its tests) to what it says now")
        observers, reason = rule.get("observed_by", []), rule.get("untestable", "").strip()
        for name in observers:
            if name not in keys and len(tests.get(name, [])) != 1:
                report.problems.append(
                    f"{label}: {name!r} is not a graded test of the suite" if name not in tests else
                    f"{label}: {name!r} names tests in several files ({', '.join(tests[name])}); write FILE::NAME")
        if observers:
            report.observed += 1
        elif reason:
            report.untestable += 1
        else:
            report.problems.append(f"{label}: no test observes {symbol}'s rule {rule.get('states')!r}: add a test "
                                   "that fails when it is broken and list it in observed_by, or say why none can "
                                   "(untestable = \"...\")")
    for symbol in sorted(stated.keys() - covered):
        report.problems.append(f"{symbol} states rules that {where} does not list: add a [[rules]] table for each")
    return report
