"""The figure of the delta-to-accuracy curve (:func:`metaeval.delta_accuracy`; ``metaeval mt audit
--delta-plot`` and the audit's HTML page): one panel per metric, the fitted agreement against the metric delta
with its bootstrap band, the empirical agreement of quantile bins of the pairs as dots, and the deltas at the
target agreement levels as dashed lines (Kocmi et al. 2024)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .figures import Figure
from .qarla_figure import check_figure_path
from .svg import colour_of, figure_svg, new_figure, save_figure, text

COLUMNS = 4
"""Panels per row."""


def figure_size(result) -> tuple[float, float]:
    """Width and height (inches) of the figure."""
    rows = -(-len(result.metrics) // COLUMNS)
    return 10.0, 2.4 * rows + 0.6


def draw_delta_accuracy(result, fig, axes) -> None:
    """Draw ``result`` (a :class:`metaeval.DeltaAccuracyResult`) on ``axes`` (one per metric, extra ones
    hidden)."""
    axes = np.atleast_1d(axes).ravel()
    for i, (ax, metric) in enumerate(zip(axes, result.metrics)):
        colour = colour_of(i)
        grid = result.grid[i]
        if np.isfinite(result.curve_low[i]).any():
            ax.fill_between(grid, result.curve_low[i], result.curve_high[i], color=colour, alpha=0.2, lw=0)
        if np.isfinite(result.curve[i]).any():
            ax.plot(grid, result.curve[i], color=colour, lw=1.5)
        bins = [b for b in result.bins if b["metric"] == metric]
        if bins:
            sizes = np.array([b["pairs"] for b in bins], dtype=float)
            ax.scatter([b["mean_delta"] for b in bins], [b["agreement"] for b in bins], s=8 + 40 * sizes / sizes.max(),
                       color="#444444", zorder=3)
        for t, target in enumerate(result.targets):
            delta = result.deltas[i, t]
            ax.axhline(target, color="#bbbbbb", lw=0.6, ls=":")
            if np.isfinite(delta) and delta <= grid[-1]:
                ax.axvline(delta, color=colour, lw=0.8, ls="--")
                ax.text(delta, 0.02, f"{target:.0%}", rotation=90, fontsize=6, va="bottom", ha="right", color=colour)
        ax.set_ylim(0.0, 1.02)
        ax.set_title(text(metric), fontsize=8)
        ax.set_xlabel("metric delta", fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in axes[len(result.metrics):]:
        ax.set_visible(False)
    axes[0].set_ylabel("agreement with humans", fontsize=7)
    fig.suptitle(f"delta-to-accuracy: logistic fit with {result.confidence_level:.0%} bootstrap band"
                 f" ({result.method}, {result.n_resamples} resamples); dots: quantile bins of the pairs", fontsize=8)
    fig.tight_layout()


def _panels(result):
    rows = -(-len(result.metrics) // COLUMNS)
    return dict(nrows=rows, ncols=min(COLUMNS, len(result.metrics)), squeeze=False)


def save_delta_accuracy_figure(result, path: str | Path) -> Path:
    """Draw ``result`` to ``path`` (``.png`` or ``.svg``; written atomically); returns the path."""
    path = check_figure_path(path)
    with new_figure(*figure_size(result), **_panels(result)) as (fig, axes):
        draw_delta_accuracy(result, fig, axes)
        save_figure(fig, path)  # in memory, then the atomic writer: no partial file
    return path


def delta_accuracy_figure(result, key: str = "mt-delta-accuracy") -> Figure:
    """The figure as an inline-SVG :class:`~metaeval.report.figures.Figure` of the report."""
    alt = (f"Agreement with the humans against the metric delta for {len(result.metrics)} metrics: logistic fits "
           f"with bootstrap bands and binned empirical agreement")
    with new_figure(*figure_size(result), **_panels(result)) as (fig, axes):
        draw_delta_accuracy(result, fig, axes)
        svg = figure_svg(fig, key=key, alt=alt)
    caption = (f"Share of system pairs whose metric verdict agrees with the humans, as a function of the metric "
               f"delta |x_a - x_b|: maximum-likelihood logistic fit (line), {result.confidence_level:.0%} bootstrap "
               f"band, empirical agreement of quantile bins of the pairs (dots, sized by pairs); dashed: the delta "
               f"at each target ({', '.join(f'{t:.0%}' for t in result.targets)}).")
    return Figure(key, svg, alt, caption)
