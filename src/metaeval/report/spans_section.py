"""The report section of span detectors: a table with intervals and clusters, and per-severity P/R figures.

:func:`spans_section` turns a :class:`~metaeval.spans.SpanEvaluationResult` (and optionally the human agreement
of :func:`~metaeval.spans.span_agreement`) into a page :class:`~metaeval.report.html.Section`;
:func:`spans_page` renders a page of its own (``metaeval spans evaluate|compare --html``), through the same
page template as the meta-evaluation report.
"""
from __future__ import annotations

import numpy as np

from .figures import WIDTH, Figure
from .formats import number
from .html import Cell, Section, Table, number_cell, render_html
from .svg import colour_of, figure_svg, new_figure, text

__all__ = ["severity_figure", "spans_section", "spans_page"]


def severity_figure(result) -> Figure:
    """Precision against recall of every detector, one panel per severity (minor, major) and one for all."""
    panels = [("all severities", result.precision, result.recall)]
    panels += [(sev, pr[:, 0], pr[:, 1]) for sev, pr in result.per_severity.items()]
    with new_figure(WIDTH, 3.4, ncols=len(panels), sharey=True) as (fig, axes):
        for ax, (title, p, r) in zip(np.atleast_1d(axes), panels):
            for i, name in enumerate(result.detectors):
                marker = "o" if result.kinds[i] == "detector" else ("s" if result.kinds[i] == "human" else "x")
                ax.scatter([r[i]], [p[i]], color=colour_of(i), marker=marker, label=text(name), s=36)
            ax.set_xlim(-0.02, 1.02)
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(title)
            ax.set_xlabel("recall")
        np.atleast_1d(axes)[0].set_ylabel("precision")
        np.atleast_1d(axes)[-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), fontsize=7)
        alt = (f"Scatter plots of precision against recall for {len(result.detectors)} span detectors and baselines: "
               f"all spans, then gold and predictions restricted to minor and to major spans.")
        caption = (f"Precision and recall per severity ({result.measure} match, {result.averaging}-averaged). "
                   "Minor / major panels keep only the spans of that severity in both the gold and the predictions "
                   "(critical counted as major); a detector predicting no span of a severity has precision 1 there "
                   "by convention. Crosses: baselines.")
        return Figure("spans-severity", figure_svg(fig, key="spans-severity", alt=alt), alt, caption)


def _ci(value, low, high) -> Cell:
    sub = "" if np.isnan(low) or np.isnan(high) else f"[{number(low, 2)}, {number(high, 2)}]"
    return number_cell(float(value), sub=sub)


def spans_section(result, agreement=None) -> Section:
    """The section: detectors and baselines with P / R / F1 and intervals, clusters, the human ceiling."""
    from ..stats.significance.clusters import rank_ranges

    ranges = rank_ranges(result.ranks) if result.ranks is not None else None
    header = ("detector", "kind", "precision", "recall", "F1", "spans") + (("cluster",) if ranges else ())
    rows = []
    for i, name in enumerate(result.detectors):
        row = [Cell(name), Cell(result.kinds[i]), _ci(result.precision[i], *result.precision_ci[i]),
               _ci(result.recall[i], *result.recall_ci[i]), _ci(result.f1[i], *result.f1_ci[i]),
               number_cell(int(result.n_spans[i]))]
        if ranges:
            row.append(Cell(ranges[i], value=int(result.ranks[i])))
        rows.append(tuple(row))
    tables = [Table("spans-table", "Span detectors against the gold spans", header, tuple(rows),
                    tuple(h not in ("detector", "kind", "cluster") for h in header))]
    from ..spans.measures import MeasureSpec

    spec = MeasureSpec(result.measure, result.averaging, result.severity, getattr(result, "matching", "optimal"),
                       getattr(result, "macro", "mean-f1"), getattr(result, "critical", "major"))
    facts = [("segments", f"{result.n_cells} ({result.n_systems} systems x {result.n_segments} segments)"),
             ("gold spans", str(result.n_gold_spans)), ("measure", spec.describe()),
             ("intervals", f"BOOT-{result.method.upper()}, k = {result.n_resamples}")]
    signatures = [("spans", str(result.signature))]
    fair = getattr(result, "fair", None)
    if fair is not None:
        facts.append(("human ceiling", f"F1 {fair['ceiling_f1']:.3f} (held-out rater vs the others' union, "
                                       f"{fair['raters']} raters)"))
        rows_fair = tuple((Cell(name), number_cell(float(f))) for name, f in zip(result.detectors, fair["f1"]))
        rows_fair += ((Cell("human (held-out rater)"), number_cell(float(fair["ceiling_f1"]))),)
        tables.append(Table("spans-fair", "Like with like: every row against the leave-one-rater-out golds of the "
                            "human ceiling", ("detector", "F1"), rows_fair, (False, True)))
    elif agreement is not None:
        facts.append(("human ceiling", f"F1 {agreement.ceiling_f1:.3f} (held-out rater vs the others' union)"))
        signatures.append(("agreement", str(agreement.signature)))
    notes = [f"{name}: {n} segments the gold did not rate left out" for name, n in result.n_left_out.items() if n]
    notes += [f"gold: {n} human error(s) left out ({reason})" for reason, n in
              (getattr(result, "errors_left_out", None) or {}).items()]
    notes += [f"{name}: predicts no source-side span; the gold's {n} source-side span(s) count as missed"
              for name, n in (getattr(result, "missed_source", None) or {}).items()]
    return Section(key="spans", title="Error spans", question="How well do the detectors find the annotated errors?",
                   paragraphs=("Precision, recall and F1 of each detector's error spans against the human spans, "
                               "with bootstrap intervals; the trivial baselines show what a measure gives for free.",),
                   facts=tuple(facts), figures=(severity_figure(result),), tables=tuple(tables), notes=tuple(notes),
                   signatures=tuple(signatures))


def spans_page(result, agreement=None, *, title: str = "Error-span evaluation", files: tuple = ()) -> str:
    """A self-contained HTML page holding :func:`spans_section`; its footer names ``files``, the files
    written beside it (none by ``metaeval spans evaluate|compare --html``)."""
    fields = result.signature.as_dict()
    return render_html(title=title, subtitle=f"gold: {fields.get('gold_file') or fields.get('gold')}",
                       sections=[spans_section(result, agreement)], beside=tuple(files))
