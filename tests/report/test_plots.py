"""The class report's plots (``autograder.report.plots``) draw every value where a reader sees it (issue 35): a ratio
of 1.2 beside a gate at 5 is a bar, not a hairline hidden under its edges; a bin of one submission beside hundreds is
labelled; a test's name is whole and inside the image, and a test nobody passed still shows its rate."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from PIL import Image

from autograder.report import plots

RATIOS = [1.19, 1.21, 1.22, 1.24, 1.25, 1.27, 1.28, 1.30, 1.33, 1.35]  # the time ratios, 1.19 to 1.35
MEMORY = [0.98, 0.99, 1.0, 1.0, 1.01, 1.02, 1.03, 1.05]


def _pixels(url: str) -> np.ndarray:
    """The PNG of a data URL as an (height, width, 3) array of 0-255 values."""
    data = base64.b64decode(url.removeprefix("data:image/png;base64,"))
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)


@pytest.mark.parametrize(("values", "gate"), [(RATIOS, 5.0), (MEMORY, 4.0)], ids=["time", "memory"])
def test_measured_figures_are_bars_a_reader_sees(values, gate):
    """The bars' colour fills at least 1 % of the image, in columns at least 10 pixels wide (before: none, or
    hairlines; the histogram was binned over the values alone, 0.008 wide on an axis running to the gate)."""
    pixels = _pixels(plots.histogram(values, xlabel="time ratio", gate=gate, gate_label="gate: at most 5"))
    bar = np.abs(pixels - np.array(to_rgb(plots.BAR)) * 255).sum(axis=2) < 30
    assert bar.mean() > 0.01, f"the bars cover {bar.mean():.2%} of the image"
    columns = np.flatnonzero(bar.any(axis=0))
    assert len(columns) >= 10 and columns.max() - columns.min() + 1 >= 10, columns


def test_a_lone_submission_beside_hundreds_is_labelled():
    figure = plots.histogram_figure([1.2] * 300 + [2.0], xlabel="time ratio", gate=5.0)
    labels = sorted(text.get_text() for text in figure.axes[0].texts if text.get_text())
    assert labels == ["1", "300"]
    heights = [bar.get_height() for bar in figure.axes[0].patches if bar.get_height()]
    assert sorted(heights) == [1, 300]


def test_test_names_are_whole_inside_the_image_and_every_rate_is_labelled():
    names = ["1.1 causal_mask: the lower-triangular \"may attend\" pattern, diagonal included, and one more long "
             "clause that no reader should lose", "2.1 costs $5", "7.1 CausalSelfAttention: time and peak memory "
             "within a few times the reference's"]
    figure = plots.pass_rates_figure(names, [0.0, 0.5, 1.0])
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    axes = figure.axes[0]
    ticks = axes.get_yticklabels()
    assert [" ".join(tick.get_text().split()).replace("\\$", "$") for tick in ticks] == names
    inside = figure.bbox
    for tick in ticks:
        box = tick.get_window_extent(canvas.get_renderer())
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and inside.y0 <= box.y0 and box.y1 <= inside.y1, tick
    assert [text.get_text() for text in axes.texts] == ["0 %", "50 %", "100 %"]
