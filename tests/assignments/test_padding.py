"""Outputs at padded positions are unspecified (the handout says so): a correct attention that zeroes them keeps
full marks, public and hidden, in masking and in positions."""

from __future__ import annotations

import shutil

import pytest

from autograder import course
from autograder.batch.discovery import discover
from autograder.batch.engine import grade_all
from autograder.grading_options import GradingOptions

ZEROED = """

class {name}({name}):
    def forward(self, x, lengths=None):
        out = super().forward(x, lengths)
        if lengths is None:
            return out
        real = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]
        return out * real[..., None]
"""


@pytest.mark.parametrize("name, module, cls", [("masking", "masking", "CausalSelfAttention"),
                                               ("positions", "positions", "RotaryCausalSelfAttention")])
def test_zeroed_padded_outputs_keep_full_marks(tmp_path, name, module, cls):
    assignment = course.load(name)
    folder = tmp_path / "zeroed"
    folder.mkdir()
    for file in assignment.files:
        shutil.copy(assignment.solution_dir / file, folder / file)
    target = folder / f"{module}.py"
    target.write_text(target.read_text() + ZEROED.format(name=cls))
    [results] = grade_all(discover([folder], name), tmp_path / "out", GradingOptions(skip_tags=("runtime",)),
                          progress=False)
    lost = [f"{t.number} {t.name}: {t.output[:300]}" for t in results.tests if t.score < t.max_score]
    assert results.max_score > 0 and not lost, "\n".join(lost)
