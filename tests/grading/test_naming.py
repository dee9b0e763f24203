"""A known mistake is named only when the suite's probes confirm it (autograder/grading/naming.py), on toy
implementations: a "frequency" function with a base, and a "scale" function of a width, in which each known mistake
and a look-alike mistake nobody catalogued part ways only on some inputs."""

import importlib.util
import time
from types import SimpleNamespace

import pytest
import torch

from autograder import course
from autograder.grading import mutants, naming, notebook_checks
from autograder.grading.api import same_value
from autograder.grading.naming import Confirmation, Probe, checked, probes_of
from autograder.grading.oracle import Oracle
from autograder.grading.proxy import StudentError, StudentTimeout


def implementation(exponent=2.0, fixed_base=None, scale=lambda width, heads: (width // heads) ** -0.5):
    def frequencies(d, base=10000.0):
        base = fixed_base or base
        return base ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)

    def attend(width, heads):
        return torch.tensor([scale(width, heads)], dtype=torch.float64)

    return SimpleNamespace(toy=SimpleNamespace(frequencies=frequencies, attend=attend))


class Mistake(SimpleNamespace):
    """What the oracle needs of a known mistake: its description and its implementation."""


REFERENCE = implementation()
KNOWN = [Mistake(description="base ignored", implementation=implementation(fixed_base=10000.0)),
         Mistake(description="scaled by sqrt(width)", implementation=implementation(scale=lambda w, h: w ** -0.5)),
         Mistake(description="never scaled", implementation=implementation(scale=lambda w, h: 1.0))]
PROBES = [Probe("frequencies", "default base", lambda impl: impl.toy.frequencies(8)),
          Probe("frequencies", "base 100", lambda impl: impl.toy.frequencies(8, 100.0)),
          Probe("attend", "width 16, 4 heads", lambda impl: impl.toy.attend(16, 4)),
          Probe("attend", "width 32, 4 heads", lambda impl: impl.toy.attend(32, 4))]


class Student:
    """A student's code in-process, as the proxy offers it: a deadline, a seed, calls that may fail."""

    def __init__(self, impl, fail=None):
        self.impl, self.fail, self.deadline, self.calls = impl, fail, None, 0

    def seed(self, seed):
        torch.manual_seed(seed)

    @property
    def toy(self):
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        return self.impl.toy


def confirmation(student_impl, probes=PROBES, fail=None, oracle=None):
    student = Student(student_impl, fail)
    return Confirmation(student, oracle or Oracle("live", REFERENCE, KNOWN), probes, same_value), student


def test_a_known_mistake_confirms_itself_and_no_other():
    for mistake in KNOWN:
        check, _ = confirmation(mistake.implementation)
        assert check.confirms(mistake.description)
        assert not [m.description for m in KNOWN if m is not mistake and check.confirms(m.description)]


def test_a_look_alike_is_not_named_where_the_probes_tell_them_apart():
    """Round 3's misnamings: an exponent doubled at base 100 gives base 10000's frequencies, as a base ignored does;
    queries scaled twice (by the head width) give a scale by sqrt(width) wherever the head width is sqrt(width). The
    probes of the function the named mistake changes tell each apart, so neither is named."""
    doubled, _ = confirmation(implementation(exponent=4.0))
    assert same_value(doubled.probes[1].fn(implementation(exponent=4.0)), PROBES[1].fn(KNOWN[0].implementation))
    assert not doubled.confirms("base ignored")
    scaled_twice = implementation(scale=lambda w, h: 1 / (w // h))
    twice, _ = confirmation(scaled_twice)
    assert same_value(PROBES[2].fn(scaled_twice), PROBES[2].fn(KNOWN[1].implementation))
    assert not twice.confirms("scaled by sqrt(width)")


def test_the_probes_chosen_are_every_probe_of_the_changed_function_and_a_separator_per_pair():
    """A base ignored agrees with the reference at the default base: that probe is chosen too (a doubled exponent
    disagrees there). A mistake the changed function's probes cannot tell from another gets the first probe, of any
    function, where the two differ."""
    check, _ = confirmation(REFERENCE)
    assert check.chosen("base ignored") == [0, 1]
    assert check.chosen("scaled by sqrt(width)") == [2, 3]
    alike = Oracle("live", REFERENCE, [*KNOWN, Mistake(description="both", implementation=implementation(
        fixed_base=10000.0, scale=lambda w, h: 2.0))])
    check, _ = confirmation(REFERENCE, oracle=alike)
    assert check.chosen("base ignored") == [0, 1, 2]  # "both" agrees with it on the frequencies, not on attend


def test_a_mistake_no_probe_shows_is_named_on_the_test_alone():
    unprobed = Oracle("live", REFERENCE, [*KNOWN, Mistake(description="slow", implementation=implementation())])
    check, _ = confirmation(REFERENCE, oracle=unprobed)
    assert check.confirms("slow") and check.unprobed == {"slow"}
    check, _ = confirmation(REFERENCE, probes=[])
    assert check.confirms("base ignored") and check.unprobed == {"base ignored"}


def test_the_students_values_are_asked_once_and_their_errors_match_a_mistake_that_raises():
    check, student = confirmation(KNOWN[0].implementation)
    assert check.confirms("base ignored") and check.confirms("base ignored")
    assert student.calls == 2  # the frequencies' two probes, once each
    raising = Oracle("live", REFERENCE, [Mistake(description="refuses", implementation=SimpleNamespace())])
    check, _ = confirmation(REFERENCE, fail=StudentError("toy", {"type": "ValueError", "message": "no"}),
                            oracle=raising)
    assert check.confirms("refuses")


def test_a_student_that_times_out_or_values_that_cannot_be_had_name_nothing():
    check, student = confirmation(KNOWN[0].implementation, fail=StudentTimeout("toy timed out"))
    assert not check.confirms("base ignored")
    assert not check.confirms("never scaled") and student.calls == 1  # stopped: nothing more is asked
    replay = Oracle("replay", store=None)  # no recording of the probes: no value, no name
    check, _ = confirmation(KNOWN[0].implementation, oracle=replay)
    assert not check.confirms("base ignored")


def test_the_probes_share_one_time_budget_per_grading(monkeypatch):
    """A student's code that is slow on the probes (they are small) spends the grading's budget once: then nothing
    more is asked, and nothing more is named."""
    monkeypatch.setattr(naming, "PROBE_SECONDS", 0.05)
    check, student = confirmation(KNOWN[0].implementation)
    fast = student.impl.toy

    def frequencies(*arguments):
        time.sleep(0.1)
        return fast.frequencies(*arguments)

    student.impl = SimpleNamespace(toy=SimpleNamespace(frequencies=frequencies, attend=fast.attend))
    assert not check.confirms("base ignored") and student.calls == 1
    assert not check.confirms("never scaled") and student.calls == 1


def test_probes_of_reads_a_suites_probes_and_refuses_two_alike():
    lm, positions = probes_of("autograder.suites.lm"), probes_of("autograder.suites.positions")
    assert len(positions) > len(probes_of("autograder.suites.masking")) > 0
    assert lm[:len(positions)] == positions and len(lm) > len(positions)  # the carried files' first, then lm's own
    assert probes_of("autograder.grading") == []  # a package without probes.py
    with pytest.raises(ValueError, match="share a function and label"):
        checked([PROBES[0], PROBES[0]], "toy")


def test_a_grading_names_the_mistake_the_probes_confirm_among_look_alikes(tmp_path):
    """One of round 3's misnamings, through the plugin: queries scaled twice (by the head width) give the scores of a
    scale by sqrt(d_model) wherever the head width is sqrt(d_model), as in the public test with padding. Both are in
    the catalogue; the test's output matches both, and the probes (their values recorded in masking's expected.zip)
    confirm the one it is: without them, neither would be named."""
    assignment = course.load("masking")
    catalogue = {m.name: m for m in mutants.catalog(assignment)}
    mutant, other = catalogue["attention_scaled_twice"], catalogue["scale_by_d_model"]
    source = mutant.materialize(tmp_path / "masking") / "masking.py"
    spec = importlib.util.spec_from_file_location("masking", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = notebook_checks.run(assignment, {"masking": module},
                                  ("test_4_self_attention.py::test_forward_with_padding_matches_reference",))
    (test,) = results.tests
    assert test.score < test.max_score
    assert test.extra_data.get("mistake") == mutant.description, test.output
    assert other.description not in test.output
