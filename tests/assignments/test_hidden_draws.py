"""Hidden draws exercise what their test checks under any secret: a draw that happens to be degenerate (one key,
a width of one) would let a mistake keep its points under one term's secret and lose them under another's."""

from __future__ import annotations

import pytest
import torch
from support.submissions import MASKING, POSITIONS

from autograder.grading import assert_close, mutants, trusted_import
from autograder.suites.masking import common
from autograder.suites.positions import common as positions_common

SECRETS = range(200)  # seeds as the ``seed`` fixture derives them: any integer


@pytest.fixture(scope="module")
def reference():
    return trusted_import.load(MASKING.solution_dir, MASKING.modules)


@pytest.mark.parametrize("name", ["no_scaling", "softmax_wrong_axis", "mask_after_softmax", "large_negative_fill"])
def test_every_sdpa_draw_tells_the_mistake_apart(reference, name):
    wrong = next(m for m in mutants.catalog(MASKING) if m.name == name).implementation
    for seed in SECRETS:
        for dtype in (torch.float32, torch.float64):
            q, k, v, mask = common.sdpa_draw(seed, dtype)
            expected = reference.masking.scaled_dot_product_attention(q, k, v, mask)[1]
            with pytest.raises(AssertionError):
                assert_close(wrong.masking.scaled_dot_product_attention(q, k, v, mask)[1], expected)


@pytest.fixture(scope="module")
def positions_reference():
    return trusted_import.load(POSITIONS.solution_dir, POSITIONS.modules)


def test_every_float64_rotary_draw_shows_an_angle_table_kept_in_float32(positions_reference):
    """The mistake drifts only as positions grow: short draws passed it under one secret and not another."""
    wrong = next(m for m in mutants.catalog(POSITIONS) if m.name == "rope_table_float32").implementation
    for seed in range(20):
        n_head, d_model, T, lengths = positions_common.rotary_draw(seed, torch.float64)
        state = positions_common.attention_state(d_model, seed, torch.float64)
        x = positions_common.inputs(3, T, d_model, seed, torch.float64)
        outputs = [common.at_real_positions(positions_common.rotary(impl, d_model, n_head, state)(x, lengths), lengths)
                   for impl in (wrong, positions_reference)]
        with pytest.raises(AssertionError):
            assert_close(*outputs)


def test_permute_check_both_ways_round_shows_a_signed_maximum(positions_reference):
    """(P X, P^-1) negates the differences of (X, P): one of the two shows max taken without abs under any draw."""
    wrong = next(m for m in mutants.catalog(POSITIONS) if m.name == "permute_check_signed").implementation
    for seed in range(20):
        T, D, F, B = positions_common.random_dims(seed, 4, 3, 12)
        x = positions_common.vectors((B, T, D), seed, torch.float64)
        weights = positions_common.ffn_weights(D, F, seed, torch.float64)
        perm, table = positions_common.permutation(T, seed), positions_common.vectors((T, D), seed + 1, torch.float64)
        answers = [[impl.positions.permute_check(inputs, order, weights, table)
                    for impl in (wrong, positions_reference)]
                   for inputs, order in ((x, perm), (x[..., perm, :], torch.argsort(perm)))]
        assert any(abs(mine - right) > 1e-6 * abs(right) for mine, right in answers), seed


def test_every_secret_finds_rows_that_stop_at_different_steps():
    """lm's stop test draws weights until its rows stop at different steps; under any secret it finds such a draw,
    and there a generate whose flags forget earlier steps returns more ids than the reference."""
    from autograder import course
    from autograder.suites.lm import common as lm_common
    from autograder.suites.lm.hidden import test_details

    lm = course.load("lm")
    reference = trusted_import.load(lm.solution_dir, lm.modules)
    wrong = next(m for m in mutants.catalog(lm) if m.name == "generate_stop_flags_not_kept").implementation
    for seed in range(20):
        state, prompt, stop = test_details._staggered_stop(reference, seed)
        lengths = [lm_common.gpt(impl, test_details.SHAPE, "rope", state).generate(prompt, 8, stop_id=stop).shape[1]
                   for impl in (reference, wrong)]
        assert lengths[0] < lengths[1], (seed, lengths)
