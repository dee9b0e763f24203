"""Failure messages, fingerprints and the recorded-expectations store."""

import os
import subprocess
import sys
import types

import pytest
import torch

from autograder import course, grading
from autograder.batch.runners import Runners
from autograder.grading import assert_close, assert_rows_sum_to_one, assert_tensor, runner
from autograder.grading.oracle import Expected, Oracle, read_store, write_store
from autograder.sandbox import permissions
from autograder.sandbox.isolation import Isolation


def message(fn) -> str:
    with pytest.raises(AssertionError) as info:
        fn()
    return str(info.value)


def test_mismatch_says_where_and_how_much():
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[1, 2] = 0.5
    text = message(lambda: assert_close(got, expected, "the output"))
    assert "1 of 6 entries differ" in text and "(1, 2)" in text and "0.5" in text


def test_shape_dtype_type_and_nan_messages():
    assert "shape (3, 2), expected (2, 3)" in message(lambda: assert_close(torch.zeros(3, 2), torch.zeros(2, 3)))
    assert "dtype torch.float64, expected torch.float32" in message(
        lambda: assert_close(torch.zeros(2, dtype=torch.float64), torch.zeros(2)))
    assert "returned a list" in message(lambda: assert_close([0.0, 0.0], torch.zeros(2)))
    assert "1 NaN" in message(lambda: assert_close(torch.tensor([0.0, float("nan")]), torch.zeros(2)))
    assert "boolean" in message(lambda: assert_close(torch.ones(2), torch.ones(2, dtype=torch.bool)))
    assert "tuple of 2 items" in message(lambda: assert_close(torch.zeros(1), (torch.zeros(1), torch.zeros(1))))


def test_tolerance_follows_the_dtype():
    assert_close(torch.tensor([1.0 + 1e-6]), torch.tensor([1.0]))
    with pytest.raises(AssertionError):
        assert_close(torch.tensor([1.0 + 1e-6], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64))


def test_tensor_subclass_is_named():
    value = torch.zeros(2)
    value.remote_meta = {"cls": "Agreeable"}
    assert "tensor subclass" in message(lambda: assert_tensor(value, "x"))


def _named(*comparisons) -> str | None:
    """The mistake a test that made these failing comparisons (``(got, expected)``) names."""
    grading.start_test()
    for got, expected in comparisons:
        message(lambda got=got, expected=expected: assert_close(got, expected))
    return grading.named_mistake()


def test_a_mistake_is_named_only_when_every_failed_comparison_matches_it():
    expected = Expected(torch.ones(3), [("no scaling", torch.full((3,), 2.0)), ("zeroed", torch.zeros(3))])
    assert _named((torch.zeros(3), expected)) == "zeroed"
    assert _named((torch.full((3,), 7.0), expected)) is None
    tupled = Expected((torch.ones(1), torch.ones(2)), [("swap", (torch.zeros(1), torch.zeros(2)))])
    assert _named((torch.zeros(2), tupled[1])) == "swap"
    other = Expected(torch.ones(2), [("zeroed", torch.zeros(2)), ("no scaling", torch.full((2,), 2.0))])
    assert _named((torch.zeros(3), expected), (torch.zeros(2), other)) == "zeroed"  # the one both agree on
    assert _named((torch.zeros(3), expected), (torch.full((2,), 2.0), other)) is None  # they point apart
    assert _named((torch.zeros(3), expected), (torch.full((2,), 5.0), other)) is None  # one matches nothing


def test_two_mistakes_with_the_same_output_are_not_named():
    """Where a test's inputs give two known mistakes the same output (a width where two scalings coincide), the
    output cannot tell which was made: neither is named, and the test records both for validate to report."""
    expected = Expected(torch.ones(3), [("wrong axis", torch.zeros(3)), ("zeroed", torch.zeros(3)),
                                        ("no scaling", torch.full((3,), 2.0))])
    assert _named((torch.zeros(3), expected)) is None
    assert grading.matched_mistakes() == ["wrong axis", "zeroed"]
    assert _named((torch.full((3,), 2.0), expected)) == "no scaling"


def test_a_passed_comparison_tells_two_alike_mistakes_apart():
    """Two mistakes give the same failed output (x4' after a swap), but only one of them also gives the weights the
    student got right: that one is named. ``recognise`` of an ungraded output that matches the reference does the
    same."""
    weights = Expected(torch.ones(2), [("weights stay", torch.zeros(2)), ("output unswapped", torch.ones(2))])
    after = Expected(torch.ones(3), [("weights stay", torch.zeros(3)), ("output unswapped", torch.zeros(3))])
    grading.start_test()
    assert_close(torch.ones(2), weights)
    message(lambda: assert_close(torch.zeros(3), after))
    assert grading.named_mistake() == "output unswapped"
    grading.start_test()
    grading.recognise(torch.ones(2), weights)
    message(lambda: assert_close(torch.zeros(3), after))
    assert grading.named_mistake() == "output unswapped"
    assert _named((torch.zeros(3), after)) is None  # without the passed comparison, no name


def test_a_value_near_the_reference_matches_no_mistake_near_it_too():
    """A loose tolerance must not let a value a little off the reference "match" a mistake a little off too: the
    value must be much nearer to the mistake than the mistake is to the reference."""
    reference = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    mistake = reference + 0.01  # a small slip, say a float32 cast
    expected = Expected(reference, [("cast to float32", mistake)])
    near = reference + 0.006  # off the reference by as much, another way
    assert _named((near, expected)) is None
    with pytest.raises(AssertionError):  # the same near value, compared at a tolerance that holds both
        grading.start_test()
        assert_close(near, expected, rtol=0, atol=0.005)
    assert grading.named_mistake() is None
    assert _named((mistake.clone(), expected)) == "cast to float32"
    assert _named((mistake + 1e-12, expected)) == "cast to float32"


def test_a_mistake_equal_to_the_reference_is_never_named():
    expected = Expected(torch.ones(3), [("harmless", torch.ones(3))])
    assert _named((torch.ones(3) + 0.5, expected)) is None


def test_a_carried_files_mistake_is_named_only_where_that_file_fails_its_checks():
    """positions borrows masking's mistakes for the carried masking.py: an output of the student's own positions code
    that looks like one of them must not be blamed on masking.py when masking.py passed its own checks."""
    borrowed = grading.api.carried_mistake("masking.py", "masking", "the scores are not divided by sqrt(d_k)")
    assert grading.api.carried_file(borrowed) == "masking.py"
    assert grading.api.carried_file("rope is applied to the values") is None
    expected = Expected(torch.ones(3), [(borrowed, torch.zeros(3)), ("rope is applied to the values", torch.zeros(3))])
    assert _named((torch.zeros(3), expected)) is None  # both match: no name
    assert grading.named_mistake(frozenset({borrowed})) == "rope is applied to the values"


def test_rows_sum_to_one():
    assert_rows_sum_to_one(torch.softmax(torch.randn(3, 4), -1))
    assert "sums to" in message(lambda: assert_rows_sum_to_one(torch.ones(2, 3)))
    assert "sums to nan" in message(lambda: assert_rows_sum_to_one(torch.full((2, 3), float("nan"))))
    assert_rows_sum_to_one(torch.tensor([[0.0, 0.0], [0.5, 0.5]]), keep_rows=torch.tensor([False, True]))


def test_store_roundtrip_and_replay(tmp_path):
    reference = type("Impl", (), {"f": staticmethod(lambda x: x * 2)})
    recorder = Oracle("record", reference, store=tmp_path / "expected.zip")
    x = torch.arange(3)

    def asked(impl):
        return impl.f(x)

    recorder.start_test("public/test_a.py::test_x")
    recorder(asked)
    recorder.save()
    first = (tmp_path / "expected.zip").read_bytes()
    write_store(tmp_path / "again.zip", read_store(tmp_path / "expected.zip"))
    assert (tmp_path / "again.zip").read_bytes() == first, "recordings must be byte-for-byte reproducible"
    replay = Oracle("replay", store=tmp_path / "expected.zip")
    replay.start_test("public/test_a.py::test_x")
    with pytest.raises(AssertionError, match="missing"):
        replay(lambda impl: impl.f(x))  # another question (written elsewhere) is never answered with this one's value
    assert torch.equal(replay(asked).value, torch.tensor([0, 2, 4]))
    x = torch.arange(4)  # the same function asking about another input
    with pytest.raises(AssertionError, match="missing"):
        replay(asked)


def test_a_part_that_the_grader_cannot_check_fails_and_says_so():
    """Fail closed: an exception other than a failed check inside a part scores the part zero."""
    from autograder.grading import Parts

    parts = Parts()
    with parts("checked"):
        pass
    with parts("not checkable"):
        {}["missing"]
    assert parts.fraction() == 0.5 and not parts.all_passed
    assert "The grader could not check this part (KeyError" in parts.summary()
    assert parts.grader_errors and "KeyError" in parts.grader_errors[0]


def test_a_batch_shares_the_mistakes_values_of_a_live_check(tmp_path):
    """A live check that fails in several gradings of a batch computes the known mistakes' values once: they are
    shared by what the check asks to the last bit and the secret, and never for a check closing over an object."""
    calls = []

    def doubled(x):
        calls.append(x)
        return x * 2

    reference = types.SimpleNamespace(f=lambda x: x + 1)
    mistakes = [types.SimpleNamespace(description="doubles", implementation=types.SimpleNamespace(f=doubled))]

    def variants(x, salt="term", closed=None):
        oracle = Oracle("live", reference, mistakes, shared=tmp_path, salt=salt)
        oracle.start_test("hidden/test_a.py::test_x")
        return oracle(lambda impl: (impl.f(x), closed) if closed is not None else impl.f(x)).variants()

    x = torch.tensor([1.0, 2.0])
    [(name, value)] = variants(x)
    assert name == "doubles" and torch.equal(value, torch.tensor([2.0, 4.0])) and len(calls) == 1
    assert torch.equal(variants(x.clone())[0][1], value) and len(calls) == 1  # the batch's next grading reads it
    variants(torch.nextafter(x, torch.tensor(9.0)))  # an input one bit away is another question
    variants(x, salt="another term")  # so is another secret's
    assert len(calls) == 3
    variants(x, closed=object())
    variants(x, closed=object())  # an object's state cannot be read exactly: computed every time
    assert len(calls) == 5 and len(list(tmp_path.glob("*.zip"))) == 3 * 2  # the reference's value beside each


def test_a_batch_shares_the_references_values_of_a_live_check(tmp_path):
    """The reference's value of a live check is computed once per batch too (every grading asks it the same
    question): keyed as the mistakes' values are, and kept apart from them; without a shared folder (no root), or for a
    check closing over an object, it is computed every time."""
    calls = []

    def added(x):
        calls.append(x)
        return x + 1, x.dtype

    reference = types.SimpleNamespace(f=added)
    mistakes = [types.SimpleNamespace(description="doubles", implementation=types.SimpleNamespace(f=lambda x: x * 2))]

    def expected(x, salt="term", closed=None, shared=tmp_path):
        oracle = Oracle("live", reference, mistakes, shared=shared, salt=salt)
        oracle.start_test("hidden/test_a.py::test_x")
        return oracle(lambda impl: (impl.f(x), closed) if closed is not None else impl.f(x))

    x = torch.tensor([1.0, 2.0])
    first = expected(x)
    again = expected(x.clone())  # the batch's next grading reads it
    assert len(calls) == 1 and torch.equal(again.value[0], torch.tensor([2.0, 3.0]))
    assert again.value[1] == first.value[1] == torch.float32 and isinstance(again.value, tuple)
    assert [name for name, _ in again.variants()] == ["doubles"] and len(calls) == 1
    expected(x, salt="another term")
    expected(x, closed=object())
    expected(x, closed=object())
    expected(x, shared=None)
    assert len(calls) == 5


def test_two_assignments_in_one_batch_never_share_values(tmp_path):
    """Their suites may ask alike (the same test file and name, a carried module's checks) of different references."""
    salts = {runner.make_oracle(course.load(name), "verdicts", shared=tmp_path, secret="term")[0].salt
             for name in ("masking", "positions")}
    assert len(salts) == 2


@pytest.mark.skipif(os.geteuid() != 0, reason="sandbox uids exist only when grading as root")
def test_the_shared_mistakes_folder_is_the_graders_alone(tmp_path):
    """The batch's folder of mistakes' values (read by every grading of the batch) is root's, mode 0700: a student's
    process, which runs as a sandbox uid, cannot plant values there to have another submission's feedback name a
    wrong mistake. Without root there is no folder (and no sharing): student code would run as the grader's user."""
    runners = Runners(Isolation("permissions"))
    with runners.stop_on_signals(signals=False):
        shared = runners.shared
        assert shared.stat().st_uid == 0 and shared.stat().st_mode & 0o777 == 0o700
        planted = subprocess.run([sys.executable, "-c", f"open({str(shared / 'x.zip')!r}, 'w')"],
                                 user=permissions.UID_POOL[-1], capture_output=True, text=True, cwd="/")
        assert planted.returncode != 0 and "Permission denied" in planted.stderr
    assert Runners(Isolation("limits")).shared is None
    with Runners(Isolation("limits")).stop_on_signals(signals=False) as lone:
        assert lone.shared is None


def test_a_mismatch_shows_the_digits_that_differ():
    """At rtol 1e-7 six digits read "yours -2.07177, expected -2.07177": print as many as the tolerance resolves."""
    expected = torch.tensor([-2.0717695], dtype=torch.float64)
    got = torch.tensor([-2.0717712], dtype=torch.float64)
    text = message(lambda: assert_close(got, expected, "the output"))
    assert "yours -2.0717712, expected -2.0717695" in text
    text = message(lambda: assert_close(torch.tensor([1.25]), torch.tensor([1.5]), "the output"))
    assert "yours 1.25, expected 1.5" in text


def test_a_property_part_earns_nothing_until_its_output_is_right():
    """A deterministic but wrong output keeps properties (rows sum to one, dropout off in eval mode): a part that
    ``requires`` the output's own part fails while that part fails, and passes once it passes."""
    from autograder.grading import Parts

    parts = Parts()
    with parts("the output"):
        raise AssertionError("wrong values")
    with parts("rows sum to one", requires="the output"):
        pass
    assert parts.fraction() == 0 and 'until the part "the output" passes' in parts.summary()
    parts = Parts()
    with parts("the output"):
        pass
    with parts("rows sum to one", requires="the output"):
        pass
    assert parts.all_passed and parts.fraction() == 1
