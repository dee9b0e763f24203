"""The hidden draw of ``autograder new``'s scaffold catches its mutant whatever the assignment's name and the term's
secret (issue 35): the seed of a hidden test comes from both, and a plain draw of large scores left every row below
where exp overflows under about one secret in 26,000, so that `new` then `validate` failed for some names.

The rendered hidden test is run here on the template's reference and mutant directly (no grading): cheap enough for
many names and secrets, the pairs that were degenerate among them."""

from __future__ import annotations

import types

import pytest

from autograder.authoring import scaffold
from autograder.grading.api import derive_seed

# (name, secret): the issue's, two ordinary ones, and pairs under which the old draw let the mutant pass.
PAIRS = [("toybars", "validate-fresh-2"), ("softmax", "validate-fresh-1"), ("attention2", "spring-2031"),
         ("toybars", "validate-fresh-51546"), ("softmax", "validate-fresh-36715"),
         ("attention2", "validate-fresh-67620"), ("course", "validate-fresh-24342")]


def _module(name: str, text: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(text, name, "exec"), module.__dict__)  # noqa: S102 - the scaffold's own templates
    return module


def _implementations(name: str) -> tuple[types.ModuleType, types.ModuleType, types.ModuleType]:
    """The rendered hidden test module, the solution and the mutant of the scaffold ``name``."""
    files = {path.name: text for path, text in scaffold.files(name).items()}
    return (_module("test_hidden", files["test_hidden.py"]), _module(name, files[f"{name}.py"]),
            _module("mutant", files["no_max_subtracted.py"]))


@pytest.mark.parametrize(("name", "secret"), PAIRS, ids=[f"{n}-{s}" for n, s in PAIRS])
def test_the_hidden_draw_fails_the_mutant_and_passes_the_reference(name, secret):
    hidden, reference, mutant = _implementations(name)
    test = getattr(hidden, f"test_{name}_secret_large_scores")
    seed = derive_seed(f"hidden/test_hidden.py::{test.__name__}", secret)  # as the grading plugin derives it
    oracle = lambda compute: compute(types.SimpleNamespace(**{name: reference}))  # noqa: E731
    test(reference, oracle, seed)
    with pytest.raises(AssertionError, match="NaN"):
        test(mutant, oracle, seed)
