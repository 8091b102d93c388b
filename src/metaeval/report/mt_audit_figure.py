"""The figure of the protocol audit (``metaeval mt audit --plot``): where each sentinel ranks among the real
metrics in every task, as in Perrella et al. (2024), with the measures of each task beside it."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .qarla_figure import check_figure_path
from .svg import new_figure, save_figure, text


def save_mt_audit_figure(result, path: str | Path) -> Path:
    """Draw :class:`metaeval.MtAuditResult` ``result`` to ``path`` (``.png`` or ``.svg``; written atomically).

    Left: one row per task, one column per sentinel; the cell is the share of the real metrics the sentinel
    ranks above (0: below all of them, 1: above all), marked ``*`` when it significantly beats one. Right:
    each task's discriminative power and ranking consistency with their intervals."""
    path = check_figure_path(path)
    with new_figure(*figure_size(result), ncols=2, gridspec_kw={"width_ratios": [3, 2]}) as (fig, (left, right)):
        draw_mt_audit(result, fig, left, right)
        save_figure(fig, path)  # in memory, then the atomic writer: no partial file
    return path


def figure_size(result) -> tuple[float, float]:
    """Width and height (inches) of the audit figure."""
    return 10.0, 0.3 * len(result.tasks) + 2.0


def draw_mt_audit(result, fig, left, right) -> None:
    """Draw the audit on two axes of ``fig`` (see :func:`save_mt_audit_figure`)."""
    from matplotlib.ticker import MaxNLocator

    tasks, sentinels = list(result.tasks), list(result.sentinels)
    p = len(result.metrics)
    share = np.full((len(tasks), len(sentinels)), np.nan)
    marks = {}
    for r in result.rows:
        if r["kind"] == "sentinel" and r["position"] > 0:
            t, s = tasks.index(r["task"]), sentinels.index(r["scorer"])
            share[t, s] = (p + 1 - r["position"]) / p
            marks[t, s] = f"{r['position']}/{p + 1}" + ("*" if r["beats"] else "")
    image = left.imshow(share, vmin=0, vmax=1, cmap="Reds", aspect="auto")
    left.grid(False)  # no grid line through the cell labels
    for (t, s), label in marks.items():  # white on the dark cells, so every label reads
        left.text(s, t, label, ha="center", va="center", fontsize=7, color="white" if share[t, s] > 0.6 else "black")
    left.set_xticks(np.arange(len(sentinels)), [text(s.replace("sentinel-", "")) for s in sentinels], fontsize=7)
    left.set_yticks(np.arange(len(tasks)), [text(t) for t in tasks], fontsize=7)
    left.set_title(f"sentinel position among {p} metrics (* beats one, p < {result.alpha:g})", fontsize=8)
    fig.colorbar(image, ax=left, fraction=0.04, label="share of metrics below")
    y = np.arange(len(tasks))
    for offset, key, low, high, label in ((-0.18, "discriminative_power", "dp_low", "dp_high",
                                           "discriminative power"),
                                          (0.18, "consistency", "cons_low", "cons_high", "ranking consistency")):
        values = np.array([m[key] for m in result.measures], dtype=float)
        err = np.array([[v - m[low], m[high] - v] for v, m in zip(values, result.measures)], dtype=float).T
        # a mean can lie outside its own percentile interval (e.g. 98 of 100 subsamples at tau 1): no bar then
        right.errorbar(values, y + offset, xerr=np.clip(np.nan_to_num(err), 0.0, None), fmt="o", ms=3, label=label)
    right.set_yticks(y, [])
    right.set_ylim(len(tasks) - 0.5, -0.5)
    lows = [m["cons_low"] for m in result.measures if m["cons_low"] == m["cons_low"]]  # NaN: no consistency
    right.set_xlim(-0.05 if min(lows, default=0) >= 0 else -1.05, 1.05)
    right.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels that never touch at this width
    # the legend above the axes, as its title: inside them it hid the points of the last tasks
    right.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False,
                 title="the measures", title_fontsize=8)
    fig.tight_layout()
