"""The report section of the protocol audit (``metaeval mt audit --html``): where each sentinel ranks among
the real metrics per task with significance, the measures of each task, the delta-to-accuracy curve, and
their figures.

:func:`mt_audit_section` builds a page :class:`~metaeval.report.html.Section` from a
:class:`metaeval.MtAuditResult`; :func:`write_mt_audit_page` writes it as one self-contained HTML page through
the report's page template.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .figures import Figure
from .formats import interval, number
from .html import Cell, Section, Table, number_cell, render_html
from .svg import figure_svg, new_figure

__all__ = ["audit_figure", "mt_audit_section", "write_mt_audit_page"]


def audit_figure(result, key: str = "mt-audit") -> Figure:
    """The audit figure of ``metaeval mt audit --plot`` as an inline-SVG figure."""
    from .mt_audit_figure import draw_mt_audit, figure_size

    alt = (f"Position of {len(result.sentinels)} sentinel metrics among {len(result.metrics)} real metrics in "
           f"{len(result.tasks)} tasks, and each task's discriminative power and ranking consistency")
    with new_figure(*figure_size(result), ncols=2, gridspec_kw={"width_ratios": [3, 2]}) as (fig, (left, right)):
        draw_mt_audit(result, fig, left, right)
        svg = figure_svg(fig, key=key, alt=alt)
    caption = ("Left: the share of the real metrics each sentinel ranks above (0: below all, 1: above all), its "
               f"position written in the cell, * when it significantly beats some real metric (p < {result.alpha:g})."
               f" Right: discriminative power and ranking consistency with their {1 - result.alpha:.0%} intervals.")
    return Figure(key, svg, alt, caption)


def _sentinel_table(result) -> Table:
    p = len(result.metrics)
    rows = []
    for task in result.tasks:
        cells = [Cell(task, task)]
        for s in result.sentinels:
            r = next((r for r in result.rows if r["task"] == task and r["scorer"] == s), None)
            if r is None or r["position"] <= 0:
                cells.append(Cell("undefined", p + 2))
                continue
            shown = f"{r['position']}/{p + 1}" + ("*" if r["beats"] else "")
            cells.append(Cell(shown, r["position"], sub=f"{number(r['statistic'], 3)}; beats {r['beats']}, "
                                                         f"beaten by {r['beaten_by']}"))
        rows.append(tuple(cells))
    header = ("task", *result.sentinels)
    return Table("mt-audit-sentinels", f"Sentinel position among the {p} real metrics (1 = above all; * = "
                 f"significantly above one, p < {result.alpha:g}; below: its statistic and how many real metrics it "
                 f"significantly beats / is beaten by)", header, tuple(rows), (False,) + (True,) * len(result.sentinels),
                 wide=True)


def _measures_table(result) -> Table:
    rows = []
    for m in result.measures:
        rows.append((Cell(m["task"], m["task"]),
                     number_cell(m["discriminative_power"], sub=interval(m["dp_low"], m["dp_high"])),
                     number_cell(m["pairs"], 0),
                     number_cell(m["consistency"], sub=interval(m["cons_low"], m["cons_high"]))))
    return Table("mt-audit-measures", "The measures: discriminative power (share of real-metric pairs significantly "
                 "different, Wilson interval) and ranking consistency (mean Kendall tau-b, full data vs halves of the "
                 "segments)", ("task", "discriminative power", "metric pairs", "ranking consistency"), tuple(rows),
                 (False, True, True, True))


def _delta_cell(curve, i, t) -> Cell:
    value = curve.deltas[i, t]
    if value == np.inf:
        return Cell("never", float("inf"))
    if not np.isfinite(value):
        return Cell("n/a", "")
    low, high = curve.delta_low[i, t], curve.delta_high[i, t]
    band = "[" + ", ".join("never" if v == np.inf else number(v, 4) for v in (low, high)) + "]"
    return Cell((">" if curve.extrapolated[i, t] else "") + number(value, 4), repr(float(value)), sub=band)


def delta_table(curve) -> Table:
    """The delta-to-accuracy table: one row per metric."""
    rows = []
    for i, metric in enumerate(curve.metrics):
        share = curve.agreeing[i] / curve.pairs[i] if curve.pairs[i] else float("nan")
        rows.append((Cell(metric, metric), number_cell(int(curve.pairs[i]), 0), number_cell(share),
                     *(_delta_cell(curve, i, t) for t in range(len(curve.targets)))))
    header = ("metric", "system pairs", "agreement", *(f"delta at {t:.0%}" for t in curve.targets))
    return Table("mt-delta-accuracy", f"Delta-to-accuracy: the metric delta at which the fitted agreement with the "
                 f"humans reaches each level, with its {curve.confidence_level:.0%} bootstrap band ('>': beyond the "
                 f"largest delta observed; 'never': the curve does not reach it)", header, tuple(rows),
                 (False,) + (True,) * (len(header) - 1), wide=True)


def mt_audit_section(result, *, command: str = "") -> Section:
    """The page section of an audit (and of its delta-to-accuracy curve when it has one)."""
    from .mt_delta_figure import delta_accuracy_figure

    curve = result.delta_accuracy
    tables = [_sentinel_table(result), _measures_table(result)]
    figures = [audit_figure(result)]
    signatures = [("audit", str(result.signature))]
    if curve is not None:
        tables.append(delta_table(curve))
        figures.append(delta_accuracy_figure(curve))
        signatures.append(("delta-to-accuracy", str(curve.signature)))
    facts = (("real metrics", str(len(result.metrics))), ("sentinels", ", ".join(result.sentinels)),
             ("tasks", str(len(result.tasks))), ("permutations", str(result.n_resamples)),
             ("consistency subsamples", str(result.n_consistency)), ("alpha", f"{result.alpha:g}"))
    return Section(
        "mt-audit", "Protocol audit: sentinels and measures",
        question="Which tasks reward degenerate metrics, which separate the real metrics, and what metric delta "
                 "predicts human agreement?",
        paragraphs=("Sentinel metrics (Perrella et al. 2024) are computed from the metric scores, never from the "
                    "gold; each task of the grid ranks them among the real metrics with the permutation tests of "
                    "metaeval mt. Discriminative power and ranking consistency judge each task as a measure (Gao et "
                    "al. 2025). The delta-to-accuracy curve (Kocmi et al. 2024) is a maximum-likelihood logistic fit "
                    "of system-pair agreement on the metric delta, with a bootstrap band.",),
        facts=facts, figures=tuple(figures), tables=tuple(tables), notes=tuple(result.notes),
        signatures=tuple(signatures), command=command)


def write_mt_audit_page(path: str | Path, result, *, command: str = "", beside: tuple[str, ...] = ()) -> Path:
    """Write :func:`mt_audit_section` as one self-contained HTML page, atomically; returns the path. ``beside``:
    the names of the other files the run writes next to the page (its footer names exactly these)."""
    from ..runtime.files import write_text_atomic

    page = render_html(title="metaeval: MT protocol audit", subtitle=str(result.signature),
                       sections=[mt_audit_section(result, command=command)], beside=beside)
    return write_text_atomic(Path(path), page)
