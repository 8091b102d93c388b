"""The report's core figures: confidence-interval forest plots and the significance heat map.

Each function takes result objects and returns a :class:`Figure` (inline SVG, alt text, caption);
figures of the analyses live in :mod:`metaeval.report.analysis_figures`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..correlation.results import MetricComparisonResult
from ..correlation.table import CorrelationTable
from .svg import COEFFICIENT_COLOURS, DIVERGING, figure_svg, new_figure, text

WIDTH = 10.0  # inches; 72 pt per inch, so a figure is ~960 px wide before scaling to the page


@dataclass(frozen=True)
class Figure:
    """One figure of the report: ``key`` (unique in the page), inline ``svg``, ``alt`` text, ``caption``."""

    key: str
    svg: str
    alt: str
    caption: str


def _value(x: float) -> float:
    return -math.inf if x is None or math.isnan(x) else x


def forest_plot(table: CorrelationTable, level: str, *, order_by: str) -> Figure:
    """One panel per coefficient: each metric's correlation (dot) and interval (bar) at ``level``.

    Metrics are sorted by their ``order_by`` coefficient, best at the top, in the same order in every
    panel, so a reader can follow one metric across coefficients.
    """
    metrics = list(table.metrics)
    key_coef = order_by if order_by in table.coefficients else table.coefficients[0]
    metrics.sort(key=lambda m: _value(table.get(m, level, key_coef).statistic))
    n = len(metrics)
    panels = len(table.coefficients)
    height = max(2.4, 1.3 + 0.22 * n)  # room for the titles, ticks and the axis label even with 1-2 metrics
    with new_figure(WIDTH, height, ncols=panels, sharey=True, squeeze=False) as (fig, axes):
        y = np.arange(n)
        for ax, coefficient in zip(axes[0], table.coefficients):
            colour = COEFFICIENT_COLOURS.get(coefficient, "#333333")
            stats = np.array([table.get(m, level, coefficient).statistic for m in metrics], dtype=float)
            lows, highs = [], []
            for m in metrics:
                ci = table.get(m, level, coefficient).ci
                lows.append(np.nan if ci is None else ci[0])
                highs.append(np.nan if ci is None else ci[1])
            lows, highs = np.array(lows, dtype=float), np.array(highs, dtype=float)
            has_ci = np.isfinite(lows) & np.isfinite(highs)
            ax.hlines(y[has_ci], lows[has_ci], highs[has_ci], color=colour, linewidth=1.6, alpha=0.8)
            ax.plot(stats, y, "o", color=colour, markersize=4)
            ax.axvline(0, color="#888888", linewidth=0.8)
            ax.set_title(coefficient, color=colour)
            ax.grid(axis="y", visible=False)
            finite = np.concatenate([stats[np.isfinite(stats)], lows[has_ci], highs[has_ci]])
            if finite.size:
                lo, hi = min(finite.min(), 0.0), max(finite.max(), 0.0)
                pad = 0.05 * (hi - lo or 1.0)
                ax.set_xlim(lo - pad, hi + pad)
        axes[0][0].set_yticks(y, [text(m) for m in metrics])
        axes[0][0].set_ylim(-0.7, n - 0.3)
        fig.set_layout_engine("constrained")  # gives the shared axis label its own row below the tick labels
        fig.supxlabel(f"{level}-level correlation with {text(table.human)}", fontsize=9)
        first = table.results[0] if table.results else None
        method = ""
        if first is not None and first.ci is not None:
            method = f"{first.confidence_level:.0%} {first.interval_method} intervals"
        alt = (f"Forest plot of {level}-level correlations of {n} metrics with {table.human}, one panel per"
               f" coefficient ({', '.join(table.coefficients)}), metrics sorted by {key_coef}, best at the top;"
               f" bars are {method or 'absent (no intervals)'}.")
        best = metrics[-1] if metrics else ""
        caption = (f"{level.capitalize()} level: dots are correlations, bars {method or 'intervals'}; sorted by "
                   f"{key_coef} (best: {best}). Overlapping bars do not by themselves mean two metrics are "
                   "indistinguishable: read the significance heat map for that.")
        return Figure(f"forest-{level}", figure_svg(fig, key=f"forest-{level}", alt=alt), alt, caption)


def significance_heatmap(result: MetricComparisonResult) -> Figure:
    """Rows and columns are metrics sorted by cluster rank; colour is ``r(row) - r(col)``.

    A filled dot marks a pair where the row metric is significantly better after the correction; a
    hollow ring one that is significant only before it. Lines separate the significance clusters.
    """
    stats = np.array([c.statistic for c in result.correlations], dtype=float)
    order = sorted(range(len(result.metrics)), key=lambda i: (result.ranks[i], -_value(stats[i])))
    p = len(order)
    deltas = result.deltas[np.ix_(order, order)]
    raw = np.nan_to_num(result.pvalues[np.ix_(order, order)], nan=1.0) < result.alpha
    corrected = result.significant[np.ix_(order, order)]
    size = max(4.5, min(WIDTH, 1.6 + 0.24 * p))
    with new_figure(size + 1.2, size) as (fig, ax):
        finite = np.abs(deltas[np.isfinite(deltas)])
        vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        image = ax.imshow(np.ma.masked_invalid(deltas), cmap=DIVERGING, vmin=-vmax, vmax=vmax,
                          interpolation="nearest", aspect="equal")
        ax.grid(False)
        rows, cols = np.nonzero(corrected)
        ax.scatter(cols, rows, s=14, color="black", marker="o", label=f"significant after {result.correction}")
        rows, cols = np.nonzero(raw & ~corrected)
        ax.scatter(cols, rows, s=14, facecolors="none", edgecolors="black", linewidths=0.8, marker="o",
                   label="significant before correction only")
        labels = [f"{result.ranks[i]} · {text(result.metrics[i])}" for i in order]
        ax.set_yticks(range(p), labels)
        ax.set_xticks(range(p), [str(k + 1) for k in range(p)])
        ax.set_xlabel("column metric (position in the row order)")
        ax.set_ylabel("rank · row metric")
        ranks = [result.ranks[i] for i in order]
        for k in range(1, p):
            if ranks[k] != ranks[k - 1]:
                ax.axhline(k - 0.5, color="black", linewidth=0.9)
                ax.axvline(k - 0.5, color="black", linewidth=0.4, linestyle=":")
        bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
        bar.set_label(f"r(row) - r(column), {result.coefficient}")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06 - 0.2 / max(size, 1)), ncol=2)
        alt = (f"Heat map of {p} x {p} metric pairs at {result.level} level: colour is the difference of"
               f" {result.coefficient} correlations with {result.human}, row minus column; filled dots mark rows"
               f" significantly better than columns after {result.correction} correction at alpha"
               f" {result.alpha:g}; rows are labelled with their significance-cluster rank.")
        caption = (f"Row metric vs column metric ({result.test}, {result.method or 'analytic'}; H1: row correlates"
                   f" better). Filled dot: significant after {result.correction} over the {result.family};"
                   " ring: significant only before correction. Solid lines separate significance clusters"
                   " (rank = 1 + number of clusters above).")
        return Figure("significance", figure_svg(fig, key="significance", alt=alt), alt, caption)
