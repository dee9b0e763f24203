"""The spec is the test plan (``authoring.rules``): every rule a skeleton states is observed by a test or marked
untestable, and a rule that loses its check, or a spec that changes under its rule, fails ``validate``."""

import pytest

from autograder import course
from autograder.authoring import rules


@pytest.mark.parametrize("name", course.names())
def test_every_rule_of_the_spec_is_observed_or_marked_untestable(name):
    report = rules.check(course.load(name))
    assert not report.problems, "\n".join(report.problems)
    assert report.rules == report.observed + report.untestable > 0


def test_a_rule_that_loses_its_check_fails():
    """Deleting a rule's test (or never writing one) leaves it unobserved; a renamed test is no graded test."""
    assignment = course.load("masking")
    table = rules.load(assignment)
    dropout = next(rule for rule in table if rule["id"] == "attention.dropout_sites")
    unobserved = [rule if rule is not dropout else {**rule, "observed_by": []} for rule in table]
    problems = rules.check(assignment, unobserved).problems
    assert len(problems) == 1 and "no test observes CausalSelfAttention's rule" in problems[0]
    renamed = [rule if rule is not dropout else {**rule, "observed_by": ["test_dropout_renamed"]} for rule in table]
    assert "'test_dropout_renamed' is not a graded test" in rules.check(assignment, renamed).problems[0]
    excused = [rule if rule is not dropout else {**{k: v for k, v in rule.items() if k != "observed_by"},
                                                  "untestable": "a reason"} for rule in table]
    report = rules.check(assignment, excused)
    assert not report.problems and report.untestable == rules.check(assignment).untestable + 1


def test_a_symbol_without_rules_and_a_spec_that_changed_fail():
    assignment = course.load("masking")
    table = rules.load(assignment)
    problems = rules.check(assignment, [rule for rule in table if rule["in"] != "merge_heads"]).problems
    assert problems == ["merge_heads states rules that autograder/suites/masking/hidden/rules.toml does not list: add "
                        "a [[rules]] table for each"]
    reworded = [rule if rule["id"] != "merge_heads.inverse" else {**rule, "states": "Inverse of join_heads"}
                for rule in table]
    assert "no longer say 'Inverse of join_heads'" in rules.check(assignment, reworded).problems[0]


def test_the_spec_holds_each_completed_symbol_its_hints_and_each_question():
    spec = rules.spec(course.load("masking"))
    assert "torch.tril" in spec["causal_mask"]  # the region's hint
    assert "CausalSelfAttention.forward" in spec and "masking" in spec  # a method, and the module's conventions
    assert "softmax_axis" in rules.spec(course.load("attention"))  # a notebook question
