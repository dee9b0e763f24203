"""Hidden draws exercise what their test checks under any secret: a draw that happens to be degenerate (one key,
a width of one) would let a mistake keep its points under one term's secret and lose them under another's."""

from __future__ import annotations

import pytest
import torch
from conftest import MASKING

from autograder import mutants, trusted_import
from autograder.grading import assert_close
from autograder.suites.masking import common

SECRETS = range(200)  # seeds as the ``seed`` fixture derives them: any integer


@pytest.fixture(scope="module")
def reference():
    return trusted_import.load(MASKING.solution_dir, MASKING.modules)


@pytest.mark.parametrize("name", ["no_scaling", "softmax_wrong_axis", "mask_after_softmax"])
def test_every_sdpa_draw_tells_the_mistake_apart(reference, name):
    wrong = next(m for m in mutants.catalog(MASKING) if m.name == name).implementation
    for seed in SECRETS:
        for dtype in (torch.float32, torch.float64):
            q, k, v, mask = common.sdpa_draw(seed, dtype)
            expected = reference.masking.scaled_dot_product_attention(q, k, v, mask)[1]
            with pytest.raises(AssertionError):
                assert_close(wrong.masking.scaled_dot_product_attention(q, k, v, mask)[1], expected)
