"""The class report's plots: matplotlib figures drawn without pyplot (no global state, no display) and returned as
``data:`` URLs of PNG images, so that the page is one file that needs no network when it is viewed. Every text drawn
passes ``sinks.plot_text``: a ``$`` in a name is a dollar sign, not mathtext."""

from __future__ import annotations

import base64
import io

from matplotlib.figure import Figure

from autograder import sinks

WIDTH = 6.4  # inches, at DPI: the images are drawn at about the width the page shows them
DPI = 100


def histogram(values: list[float], *, xlabel: str, gate: float | None = None, gate_label: str = "",
              bins: int = 20) -> str:
    """A histogram of ``values`` (a data URL), with a dashed line at ``gate`` when given."""
    figure = Figure(figsize=(WIDTH, 2.6), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    axes.hist(values, bins=bins, color="#4c72b0", edgecolor="white")
    if gate is not None:
        axes.axvline(gate, color="#c44e52", linestyle="--", label=sinks.plot_text(gate_label or f"gate {gate:g}"))
        axes.legend(loc="upper right", frameon=False)
    axes.set_xlabel(sinks.plot_text(xlabel))
    axes.set_ylabel("submissions")
    axes.yaxis.get_major_locator().set_params(integer=True)
    return _data_url(figure)


def pass_rates(names: list[str], rates: list[float]) -> str:
    """A horizontal bar per test: the share of submissions that passed it (0 to 1), in the order given."""
    figure = Figure(figsize=(WIDTH, 0.9 + 0.22 * len(names)), dpi=DPI, layout="constrained")
    axes = figure.add_subplot()
    positions = range(len(names))
    axes.barh(positions, [100 * rate for rate in rates], color="#55a868")
    axes.set_yticks(positions, [sinks.plot_text(name if len(name) <= 48 else name[:45] + "...") for name in names],
                    fontsize=7)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("passed (% of submissions)")
    return _data_url(figure)


def _data_url(figure: Figure) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
