"""Hidden tests found by mutation testing (``autograder validate --mutate positions``, docs/authoring.md): what the
other tests let through."""

import torch

from autograder.grading import graded
from autograder.suites.positions import common


@graded(points=1, covers=["apply_rope"])
def test_rope_refusals(positions, parts, seed):
    """apply_rope: a position at max_positions or below 0 raises ValueError"""
    # Not a table for another width: the public test_apply_rope_properties asks that, and a mistake costs points once.
    table = common.angle_table(8, 16, seed=seed)
    x = common.vectors((4, 8), seed, torch.float64)
    for label, where in (("the position max_positions = 16, one past the table's last row", [0, 5, 16, 2]),
                         ("the position -1", [3, -1, 2, 0])):
        with parts(f"{label} raises a ValueError"):
            common.assert_raises_value_error(lambda where=where: positions.apply_rope(x, table, torch.tensor(where)),
                                             f"apply_rope with {label}", "the table has no angles for it")

# autograder-hidden-canary-7d3e9a (never ships to students)
