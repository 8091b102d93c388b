"""Figures of the analyses' report sections: Delta(l, u) heat maps and curve, ranking-stability curves,
top-k curves, system-verdict agreement, normality.

A metric keeps one colour in every figure (its position among the report's focus metrics, see
:func:`metaeval.report.svg.colour_of`); the human score is always drawn in black.
"""
from __future__ import annotations

import math

import numpy as np

from .figures import WIDTH, Figure
from .svg import DIVERGING, HUMAN_COLOUR, colour_of, figure_svg, new_figure, text

# (short label for tables, legend label, colour) of the five ways a metric's verdict can relate to the humans'.
VERDICT_PARTS = (
    ("same", "same significant verdict", "#009E73"),
    ("both n.s.", "both: no significant difference", "#BBD7C9"),
    ("metric only", "metric significant, humans not", "#E69F00"),
    ("humans only", "humans significant, metric not", "#56B4E9"),
    ("opposite", "opposite significant verdicts", "#D55E00"),
)


def _integer_ticks(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _no_minor_ticks(ax) -> None:
    from matplotlib.ticker import NullLocator

    ax.xaxis.set_minor_locator(NullLocator())


def _colour(metric: str, focus: tuple[str, ...]) -> str:
    return colour_of(focus.index(metric)) if metric in focus else "#555555"


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_DASHES = ("-", "--", "-.", ":")


def _style(index: int) -> dict:
    """Marker and line style of the index-th curve: with many metrics the curves stay apart even where
    the colours are the same (metrics outside the focus are grey)."""
    return {"marker": _MARKERS[index % len(_MARKERS)], "linestyle": _DASHES[index % len(_DASHES)],
            "markersize": 4, "linewidth": 1.3}


def _band(ax, x, low, high, colour) -> None:
    ok = np.isfinite(low) & np.isfinite(high)
    if ok.any():
        ax.fill_between(np.asarray(x)[ok], np.asarray(low)[ok], np.asarray(high)[ok], color=colour, alpha=0.15,
                        linewidth=0)


def _edge_labels(result) -> tuple[list[str], list[str]]:
    k = result.upper.shape[1]
    if result.fractions is not None:
        uppers = [f"{f:.0%}" for f in result.fractions]
        lowers = ["0"] + uppers[:-1]
        return lowers, uppers
    uppers = [f"{u:.3g}" for u in result.upper[0]]
    return ["0"] + uppers[: k - 1], uppers


def delta_curve(result, focus: tuple[str, ...]) -> Figure:
    """The cumulative curve r_Delta(0, u): tau over the pairs closest in metric score, with intervals."""
    with new_figure(WIDTH * 0.62, 3.8) as (fig, ax):
        k = result.upper.shape[1]
        x = result.fractions * 100 if result.fractions is not None else np.arange(1, k + 1)
        for a, metric in enumerate(result.metrics):
            colour = _colour(metric, focus)
            if metric in focus:
                _band(ax, x, result.ci_low[a, 0], result.ci_high[a, 0], colour)
            ax.plot(x, result.statistic[a, 0], color=colour, label=text(metric), **_style(a))
        ax.axhline(0, color="#888888", linewidth=0.8)
        ax.set_xlabel("% of system pairs closest in metric score" if result.fractions is not None
                      else "upper edge index")
        ax.set_ylabel(f"{result.coefficient} over those pairs")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
        alt = (f"Line chart: for {len(result.metrics)} metrics, Kendall tau-b with {result.human} over the system"
               " pairs whose metric-score gap is smallest, as the share of pairs grows from 10% to 100%, with"
               f" {result.confidence_level:.0%} bootstrap bands.")
        caption = ("r_Delta(0, u): left of the plot are the close pairs researchers actually compare; the"
                   " right end (100%) is the usual system-level tau. Shaded: bootstrap intervals over inputs.")
        return Figure("delta-curve", figure_svg(fig, key="delta-curve", alt=alt), alt, caption)


def delta_heatmaps(result, focus: tuple[str, ...]) -> Figure:
    """One (l, u) heat map per metric: tau over the pairs whose gap lies in [l, u]; empty cells blank."""
    count = len(result.metrics)
    cols = min(2, count)  # two per row: cells large enough for 8-point labels (3 per row made them ~7 px)
    rows = math.ceil(count / cols)
    lowers, uppers = _edge_labels(result)
    k = len(uppers)
    with new_figure(WIDTH, 4.6 * rows + 0.4, nrows=rows, ncols=cols, squeeze=False) as (fig, axes):
        fig.subplots_adjust(hspace=0.5)  # the rotated u labels and "upper edge u" clear the next row's title
        image = None
        for a, metric in enumerate(result.metrics):
            ax = axes[a // cols][a % cols]
            values = np.ma.masked_invalid(result.statistic[a])
            image = ax.imshow(values, cmap=DIVERGING, vmin=-1, vmax=1, origin="lower", interpolation="nearest")
            ax.grid(False)
            ax.set_facecolor("#f0f0f0")
            for i in range(k):
                for j in range(i, k):
                    v = result.statistic[a, i, j]
                    label = "-" if np.isnan(v) else f"{v:.2f}".replace("0.", ".", 1) if abs(v) < 1 else f"{v:.0f}"
                    ax.text(j, i, label, ha="center", va="center", fontsize=8,
                            color="white" if np.isfinite(v) and abs(v) > 0.6 else "black")
            step = 1 if k <= 10 else 2
            ax.set_xticks(range(0, k, step), uppers[::step], rotation=90, fontsize=9)
            ax.set_yticks(range(0, k, step), lowers[::step], fontsize=9)
            ax.set_title(text(metric), color=_colour(metric, focus), fontsize=11)
            ax.set_xlabel("upper edge u", fontsize=9)
            if a % cols == 0:
                ax.set_ylabel("lower edge l", fontsize=9)
        for extra in range(count, rows * cols):
            axes[extra // cols][extra % cols].axis("off")
        if image is not None:
            bar = fig.colorbar(image, ax=axes, fraction=0.025, pad=0.02)
            bar.set_label(f"{result.coefficient} with {text(result.human)}")
        alt = (f"{count} heat maps, one per metric: Kendall tau-b with {result.human} over the system pairs whose"
               " metric-score gap lies between a lower edge (rows) and an upper edge (columns), edges at"
               " quantiles of the gaps; empty or too-small cells are blank.")
        caption = (f"Delta(l, u) (Deutsch, Dror & Roth 2022): the bottom row is the cumulative curve; diagonal cells"
                   f" are single bands of pairs. Cells with fewer than {result.min_pairs} pairs or no defined tau are"
                   f" blank (NaN, never 0). Edges are per-metric quantiles of |metric gap|; a pair on an edge"
                   f" belongs to {'both cells' if result.boundary == 'both' else 'the lower cell only'}.")
        return Figure("delta-heatmaps", figure_svg(fig, key="delta-heatmaps", alt=alt), alt, caption)


def stability_curves(result, focus: tuple[str, ...]) -> Figure:
    """Mean +- sd of the correlation between rankings from two samples of m inputs, per scorer."""
    with new_figure(WIDTH * 0.62, 3.8) as (fig, ax):
        for s, scorer in enumerate(result.scorers):
            human = scorer == result.human
            colour = HUMAN_COLOUR if human else _colour(scorer, focus)
            mean, sd = result.mean[s], result.sd[s]
            _band(ax, result.sizes, mean - sd, mean + sd, colour)
            style = dict(marker="s", linestyle="--", markersize=4, linewidth=1.6) if human else _style(s)
            ax.plot(result.sizes, mean, color=colour, label=text(scorer) + (" (human)" if human else ""), **style)
        ax.set_xlabel("inputs per sample (m)")
        _integer_ticks(ax)
        ax.set_ylabel(f"{result.coefficient} between the two rankings")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
        alt = (f"Line chart: for the human score and {len(result.scorers) - 1} metrics, the mean {result.coefficient}"
               " between the system rankings computed from two random samples of m inputs, for growing m,"
               " with a band of plus or minus one standard deviation.")
        caption = (f"Ranking stability ({result.n_repetitions} repetitions per m, {result.sampling} samples):"
                   " higher means the ranking depends less on which inputs were judged. The dashed black curve"
                   " is the human score.")
        return Figure("stability", figure_svg(fig, key="stability", alt=alt), alt, caption)


def topk_curves(result, focus: tuple[str, ...]) -> Figure:
    """Correlation over the k best systems (by human score), k from N down to 3, with intervals."""
    with new_figure(WIDTH * 0.62, 3.8) as (fig, ax):
        ks = np.asarray(result.ks)
        for a, metric in enumerate(result.metrics):
            colour = _colour(metric, focus)
            if metric in focus:
                _band(ax, ks, result.ci_low[a], result.ci_high[a], colour)
            ax.plot(ks, result.statistic[a], color=colour, label=text(metric), **_style(a))
        ax.axhline(0, color="#888888", linewidth=0.8)
        ax.set_xlim(ks.max() + 0.5, ks.min() - 0.5)
        _integer_ticks(ax)
        ax.set_xlabel("k best systems by human score (fewer to the right)")
        ax.set_ylabel(f"{result.coefficient} with {text(result.human)}")
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
        alt = (f"Line chart: for {len(result.metrics)} metrics, the {result.coefficient} correlation with"
               f" {result.human} over only the k best systems, k decreasing from {ks.max()} to {ks.min()}, with"
               f" {result.confidence_level:.0%} bootstrap bands.")
        caption = ("Top-k systems (Bhandari et al. 2020, Exp-II): a metric that ranks all systems well may"
                   " still fail to order the best ones. Shaded: bootstrap intervals over inputs; few systems"
                   " give wide bands.")
        return Figure("topk", figure_svg(fig, key="topk", alt=alt), alt, caption)


def verdict_parts(confusion: np.ndarray) -> np.ndarray:
    """(metrics, 5) counts of :data:`VERDICT_PARTS` from (metrics, 3, 3) confusion matrices
    (rows human, columns metric, order better / worse / tie)."""
    c = np.asarray(confusion)
    return np.stack([
        c[:, 0, 0] + c[:, 1, 1],
        c[:, 2, 2],
        c[:, 2, 0] + c[:, 2, 1],
        c[:, 0, 2] + c[:, 1, 2],
        c[:, 0, 1] + c[:, 1, 0],
    ], axis=1)


def verdict_bars(result, focus: tuple[str, ...]) -> Figure:
    """Per metric, the system pairs split by how its verdict relates to the humans' verdict."""
    parts = verdict_parts(result.confusion)
    order = np.argsort(-np.nan_to_num(result.f1, nan=-1.0), kind="stable")
    n = len(result.metrics)
    with new_figure(WIDTH * 0.8, 0.9 + 0.38 * n) as (fig, ax):
        y = np.arange(n)
        left = np.zeros(n)
        for p, (_, label, colour) in enumerate(VERDICT_PARTS):
            widths = parts[order, p].astype(float)
            ax.barh(y, widths, left=left, color=colour, label=label, height=0.65)
            left += widths
        ax.set_yticks(y, [f"{text(result.metrics[i])}  (F1 {result.f1[i]:.2f})" for i in order])
        for tick, i in zip(ax.get_yticklabels(), order):
            tick.set_color(_colour(result.metrics[i], focus))
        ax.invert_yaxis()
        ax.set_xlabel("system pairs")
        ax.grid(axis="y", visible=False)
        ax.legend(loc="upper center", bbox_to_anchor=(0.45, -0.5 / max(1, n) - 0.12), ncol=3, fontsize=7)
        alt = (f"Stacked bar chart: for {n} metrics, the {len(result.pairs)} system pairs split into same significant"
               " verdict as the humans, both not significant, significant for the metric only, significant for"
               " the humans only, and opposite verdicts; metrics sorted by weighted F1.")
        caption = (f"System verdicts (Bhandari et al. 2020, Exp-III): paired {result.test} test per system pair at"
                   f" {result.confidence_level:.0%} for the humans and for each metric. Green: agreement;"
                   " orange: the metric claims a difference humans do not see; red: the metric contradicts"
                   " the humans.")
        return Figure("verdicts", figure_svg(fig, key="verdicts", alt=alt), alt, caption)


def normality_chart(result, focus: tuple[str, ...]) -> Figure:
    """System-level Shapiro-Wilk p-values and the share of per-input tests that reject normality."""
    n = len(result.scorers)
    with new_figure(WIDTH * 0.8, 0.9 + 0.32 * n, ncols=2, sharey=True) as (fig, (left, right)):
        y = np.arange(n)
        colours = [HUMAN_COLOUR if s in result.humans else _colour(s, focus) for s in result.scorers]
        pvalues = np.clip(np.asarray(result.system_pvalue, dtype=float), 1e-6, 1.0)
        left.scatter(pvalues, y, c=colours, s=22, zorder=3)
        left.axvline(result.alpha, color="#D55E00", linewidth=1, linestyle="--", label=f"alpha {result.alpha:g}")
        left.set_xscale("log")
        _no_minor_ticks(left)
        left.set_xlim(1e-6, 1.5)
        left.set_xlabel("Shapiro-Wilk p-value of the system scores")
        left.legend(loc="lower right", fontsize=7)
        right.barh(y, result.share_rejected, color=colours, height=0.6)
        right.axvline(result.alpha, color="#D55E00", linewidth=1, linestyle="--")
        right.set_xlim(0, 1)
        right.set_xlabel(f"share of inputs rejecting normality (p < {result.alpha:g})")
        left.set_yticks(y, [text(s) + (" (human)" if s in result.humans else "") for s in result.scorers])
        left.invert_yaxis()
        for ax in (left, right):
            ax.grid(axis="y", visible=False)
        alt = (f"Two-panel chart for {n} scorers: left, the Shapiro-Wilk p-value of the system scores on a log scale"
               f" with the alpha {result.alpha:g} line; right, the share of inputs whose scores across systems"
               " reject normality.")
        caption = ("Normality (Deutsch, Dror & Roth 2021, App. A): Pearson-based Fisher intervals and Williams'"
                   " test assume normal scores. Points left of the dashed line and long bars mean that assumption"
                   " fails; prefer the bootstrap and permutation results above.")
        return Figure("normality", figure_svg(fig, key="normality", alt=alt), alt, caption)
