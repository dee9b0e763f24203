"""The mutation operators of ``validate --mutate`` and the record of equivalent mutants (no grading: milliseconds).

The full run grades hundreds of mutants and is documented in docs/authoring.md#mutation-testing; here, what it
stands on: each operator makes the slip it says, only in lines students write, with ids that do not move when other
code does, and every mutant recorded as equivalent is still made by the operators."""

import ast
import types

import pytest

from autograder import course
from autograder.authoring import mutation_testing, mutations

SOURCE = '''import math
import torch

HIDE = 10000


def attend(q, k, v, mask, dropout=None):
    """Not a student's line: a docstring."""
    scale = 10000.0  # outside the markers: never mutated
    # BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, -math.inf), dim=-1)
    if dropout is not None:
        weights = dropout(weights)
    dropout.eval()
    return weights[:, :-1] @ v, 10000
    # END SOLUTION
'''


def _changes(source: str = SOURCE, **options) -> dict[str, set[str]]:
    found = mutations._mutations("m.py", source, lambda text: text, options.get("operators", mutations.OPERATORS),
                                 options.get("functions", ()))
    out: dict[str, set[str]] = {}
    for mutation in found:
        out.setdefault(mutation.operator, set()).add(mutation.change)
        ast.parse(mutation.text)  # every mutant is a file that parses
    return out


def test_each_operator_makes_its_slip():
    changes = _changes()
    assert {"-1 -> -2"} <= changes["dim"] and "-2 -> -1" in changes["dim"]  # dim=-1, and transpose's axes
    assert "scores.masked_fill(~mask, -math.inf) -> scores" in changes["drop"]
    assert "dropout(weights) -> weights" in changes["drop"]
    assert "math.sqrt(q.shape[-1]) -> q.shape[-1]" in changes["drop"]
    assert "dropout.eval() -> pass" in changes["drop"]
    assert "-1 -> -1 - 1" in changes["slice"] and "-1 -> -2" in changes["slice"]  # the bound and q.shape[-1]
    assert "q @ k.transpose(-2, -1) -> k.transpose(-2, -1) @ q" in changes["swap"]
    assert "dropout.eval() -> dropout.train()" in changes["mode"]
    assert {"10000 -> 10001", "10000 -> 1000"} <= changes["constant"]
    assert "dropout is not None -> dropout is None" in changes["compare"] and "~mask -> mask" in changes["compare"]
    assert "weights[:, :-1] @ v -> weights[:, :-1] * v" in changes["arith"]


def test_only_the_lines_students_write_are_mutated():
    everything = {change for changes in _changes().values() for change in changes}
    assert not any("10000.0" in change or "Not a student" in change for change in everything)
    assert mutations._mutations("m.py", SOURCE.replace("# BEGIN SOLUTION", "").replace("# END SOLUTION", ""),
                                lambda text: text, mutations.OPERATORS, ()) == []


def test_ids_do_not_move_when_other_code_does():
    before = {m.id: m.change for m in mutations._mutations("m.py", SOURCE, str, mutations.OPERATORS, ())}
    moved = SOURCE.replace("HIDE = 10000\n", "HIDE = 10000\nOTHER = 3\n\n\ndef helper():\n    return 1\n")
    after = {m.id: m.change for m in mutations._mutations("m.py", moved, str, mutations.OPERATORS, ())}
    assert before == after and len(before) == len(set(before))


def test_a_sample_covers_every_function():
    found = [types.SimpleNamespace(file="f.py", function=name, id=f"{name}{i}") for name in "abc" for i in range(5)]
    picked = mutation_testing.sample(found, 6)
    assert len(picked) == 6 and {m.function for m in picked} == {"a", "b", "c"}
    assert mutation_testing.sample(found, None) == found


@pytest.mark.parametrize("name", course.names())
def test_every_recorded_equivalent_is_still_made(name):
    """An equivalent recorded for a mutant the operators no longer make (its function changed) is stale: the survivors
    must be judged anew (``autograder validate --mutate NAME``)."""
    assignment = course.load(name)
    assert mutation_testing.stale(assignment) == []
    assert all(m.file in assignment.own_files for m in mutations.generate(assignment))
