"""The figure of ``metaeval mt --plot``: each scope's ranking (language pairs, then pooled) with its clusters,
human baselines marked (docs/mt.md, "Human baselines")."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .qarla_figure import check_figure_path
from .svg import HUMAN_COLOUR, PALETTE, new_figure, save_figure, text

#: Colour of a metric by its verdict against the first human baseline.
VERDICT_COLOURS = {"above": "#009E73", "level": "#999999", "below": "#D55E00", "untested": "#0072B2"}


def save_mt_figure(result, path: str | Path) -> Path:
    """Draw :class:`metaeval.MtEvaluationResult` ``result`` to ``path`` (``.png`` or ``.svg``; written
    atomically).

    One panel per scope: the metrics' averages best first, labelled with their cluster rank; a human baseline
    is a black star named ``NAME (human)`` with a dashed line at its average, and the metrics are coloured by
    their verdict against the first baseline (above / level / below, p < alpha). Without baselines the
    metrics take the colour of their cluster."""
    path = check_figure_path(path)
    scopes = list(result.scopes)
    baselines = list(result.human_baselines)
    verdicts = {}
    if baselines:
        for r in result.baseline_verdicts():
            if r["task"] == "average" and r["baseline"] == baselines[0]:
                verdicts[r["scope"], r["metric"]] = r["verdict"]
    p = len(result.metrics)
    height = max(2.2, 0.22 * p + 1.0)
    with new_figure(3.6 * len(scopes), height, ncols=len(scopes), squeeze=False) as (fig, axes):
        for ax, scope in zip(axes[0], scopes):
            values = np.asarray(result.averages[scope], dtype=float)
            ranks = np.asarray(result.ranks[scope])
            order = np.argsort(-np.nan_to_num(values, nan=-np.inf), kind="stable")
            y = np.arange(p)
            for pos, i in enumerate(order):
                metric = result.metrics[i]
                if metric in baselines:
                    ax.plot(values[i], pos, marker="*", ms=11, color=HUMAN_COLOUR, linestyle="none")
                    ax.axvline(values[i], color=HUMAN_COLOUR, linestyle="--", linewidth=0.8)
                    continue
                colour = (VERDICT_COLOURS[verdicts.get((scope, metric), "untested")] if baselines
                          else PALETTE[(int(ranks[i]) - 1) % len(PALETTE)])
                ax.plot(values[i], pos, marker="o", ms=5, color=colour, linestyle="none")
            ax.set_yticks(y, [text(f"{result.label(result.metrics[i])}  [{int(ranks[i])}]") for i in order],
                          fontsize=7)
            ax.set_ylim(p - 0.5, -0.5)
            ax.set_title(text(scope), fontsize=9)
            ax.set_xlabel("average (cluster rank in brackets)", fontsize=7)
        note = (f"black star: human baseline; colour: verdict against {baselines[0]} (green above, grey level, "
                f"red below; p < {result.alpha:g})" if baselines else
                f"colour: significance cluster ({result.significance}, p < {result.alpha:g})")
        fig.suptitle(text(f"{result.protocol}: {note}"), fontsize=8)
        fig.tight_layout()
        save_figure(fig, path)  # in memory, then the atomic writer: no partial file
    return path
