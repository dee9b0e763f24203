"""The class report's plots: matplotlib figures drawn without pyplot (no global state, no display) and returned as
``data:`` URLs of PNG images, so that the page is one file that needs no network when it is viewed. Every text drawn
passes ``sinks.plot_text``: a ``$`` in a name is a dollar sign, not mathtext.

Every value is drawn where a reader sees it: each bar of a histogram is at least a bin of the axis wide and says how
many it counts, each test's bar says its pass rate, and test names are wrapped, never cut (issue 35: ratios from 1.19
to 1.35 beside a gate at 5 drew no visible bar, and names were cut at 45 characters)."""

from __future__ import annotations

import base64
import io
import textwrap

from matplotlib.figure import Figure

from autograder import sinks

WIDTH = 6.4  # inches, at DPI: the images are drawn at about the width the page shows them
WIDE = 9.0  # the pass rates' figure, whose wrapped test names take its left part
DPI = 100
NAME_WIDTH = 60  # characters per line of a test's name
LINE = 0.15  # inches per line of a test's name
BAR = "#4c72b0"


def histogram(values: list[float], *, xlabel: str, gate: float | None = None, gate_label: str = "",
              bins: int = 20) -> str:
    """A histogram of ``values`` (a data URL), with a dashed line at ``gate`` when given (``histogram_figure``)."""
    return _data_url(histogram_figure(values, xlabel=xlabel, gate=gate, gate_label=gate_label, bins=bins))


def histogram_figure(values: list[float], *, xlabel: str, gate: float | None = None, gate_label: str = "",
                     bins: int = 20) -> Figure:
    """The histogram's figure: ``bins`` equal bins over the values and the gate together, so that each bar is at
    least one bin of the axis wide (binned over the values alone, ratios from 1.19 to 1.35 made bars of 0.008 on an
    axis that runs to the gate at 5: narrower than their white edges), and each bar labelled with its count (one
    submission beside hundreds is a bar one pixel high)."""
    figure = Figure(figsize=(WIDTH, 2.6), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    span = [*values, gate] if gate is not None else values
    low, high = min(span), max(span)
    if high - low < 1e-9 * max(1.0, abs(high)):  # one value: a bin of width 1 around it, as matplotlib's own
        low, high = low - 0.5, high + 0.5
    counts, _, bars = axes.hist(values, bins=bins, range=(low, high), color=BAR, edgecolor="white", linewidth=0.5)
    axes.bar_label(bars, labels=[f"{count:.0f}" if count else "" for count in counts], fontsize=7, padding=1)
    axes.margins(y=0.15)
    if gate is not None:
        axes.axvline(gate, color="#c44e52", linestyle="--", label=sinks.plot_text(gate_label or f"gate {gate:g}"))
        axes.legend(loc="upper right", frameon=False)
    axes.set_xlabel(sinks.plot_text(xlabel))
    axes.set_ylabel("submissions")
    axes.yaxis.get_major_locator().set_params(integer=True)
    return figure


def pass_rates(names: list[str], rates: list[float]) -> str:
    """A horizontal bar per test: the share of submissions that passed it (0 to 1), in the order given
    (``pass_rates_figure``)."""
    return _data_url(pass_rates_figure(names, rates))


def pass_rates_figure(names: list[str], rates: list[float]) -> Figure:
    """The pass rates' figure: each name whole, wrapped at ``NAME_WIDTH`` characters (the figure as tall as its lines),
    and each bar labelled with its rate, so that a test nobody passed is seen too."""
    labels = [textwrap.fill(sinks.plot_text(name), NAME_WIDTH, break_long_words=False, break_on_hyphens=False)
              for name in names]
    lines = sum(label.count("\n") + 1 for label in labels)
    figure = Figure(figsize=(WIDE, 0.9 + LINE * lines + 0.06 * len(names)), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    positions = range(len(names))
    bars = axes.barh(positions, [100 * rate for rate in rates], color="#55a868")
    axes.bar_label(bars, labels=[f"{100 * rate:.0f} %" for rate in rates], fontsize=7, padding=2)
    axes.set_yticks(positions, labels, fontsize=7)
    axes.set_xlim(0, 112)  # room for the label of a bar at 100 %
    axes.set_xticks(range(0, 101, 20))
    axes.set_ylim(len(names) - 0.5, -0.5)  # the first test on top
    axes.set_xlabel("passed (% of submissions)")
    return figure


def _data_url(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
