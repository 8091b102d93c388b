"""The terminal layouts of the analyses whose command is built from their declaration
(:mod:`metaeval.cli.analysis_commands`) and that print more than a table of their frame.

:data:`VIEWS` maps an analysis to ``view(result, options, frame, fmt, output) -> str``, the text of the
result in ``fmt`` (every format but the terminal table comes from
:func:`metaeval.report.render.render_text` as for every analysis).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text

from ..report.render import ColumnBlocks, frame_table, render_text, signature_footer
from ..report.render import signature_footer as footer
from ..report.formats import interval, number
from .common import output_width


def terminal(layout: Callable[[Any], Any]) -> Callable[..., str]:
    """A view drawing the terminal table with ``layout(result)``, at the output's width."""
    def view(result, options, frame, fmt, output) -> str:
        return render_text(result, fmt, terminal=layout, frame=frame, width=output_width(output))
    return view


def titled(result, fmt: str, frame, title: str, footer_text: str = "", width: int | None = None) -> str:
    """Text of ``result`` in ``fmt``; the terminal table is ``frame`` with ``footer_text`` and the signature."""
    def table(result):
        return [frame_table(frame, title=title), *([Text(footer_text)] if footer_text else []),
                *signature_footer(result)]

    return render_text(result, fmt, terminal=table, frame=frame, width=output_width() if width is None else width)


# -- delta ----------------------------------------------------------------------------------------------------

def _delta(result, options, frame, fmt, output) -> str:
    layout = _grid_tables if options["view"] == "grid" else _curve_table
    return render_text(result, fmt, terminal=layout, frame=frame, width=output_width(output))


def _short(value: float) -> str:
    """.42, -.05, 1.00, n/a: two decimals without the leading zero (the cells stay narrow)."""
    value = float(value)
    if value != value:
        return "n/a"
    return f"{value:.2f}".replace("0.", ".", 1) if abs(value) < 1 else f"{value:.2f}"


def _cell(result, a, i, j) -> Text:
    """tau over 'low high' over the number of pairs, each line at most 9 characters."""
    text = Text(_short(result.statistic[a, i, j]), style="bold")
    if result.n_resamples:
        text.append(f"\n{_short(result.ci_low[a, i, j])} {_short(result.ci_high[a, i, j])}", style="dim")
    text.append(f"\nn={int(result.n_pairs[a, i, j])}", style="dim")
    return text


def _edge(value: float) -> str:
    return number(float(value), 3)


def _grid_tables(result):
    """One block per metric: rows l, columns u (abbreviated: the fraction, then u), split to fit the width."""
    parts = []
    k = result.upper.shape[1]
    for a, metric in enumerate(result.metrics):
        def build(columns, a=a) -> Table:
            table = Table()
            table.add_column("l \\ u", style="cyan", no_wrap=True)
            for j in columns:
                label = _edge(result.upper[a, j])
                if result.fractions is not None:
                    label = f"{result.fractions[j]:.0%}\n{label}"
                table.add_column(label, justify="right", no_wrap=True)
            for i in range(k):
                if i > max(columns):
                    continue
                table.add_row(_edge(result.lower[a, i]),
                              *[Text("") if j < i else _cell(result, a, i, j) for j in columns])
            return table

        parts.append(Text(f"{metric}: Kendall tau of the pairs with l <= |gap| <= u "
                          f"({'both edges' if result.boundary == 'both' else 'l < |gap| for l > 0'})", style="bold"))
        parts.append(ColumnBlocks(build, k))
    header = ("columns: u as the fraction of the closest pairs over its value; rows: l"
              if result.fractions is not None else "columns: u; rows: l")
    notes = [f"{header}; cell: tau (.42 = 0.42) over " + (
                 f"its BOOT-INPUTS {result.confidence_level:.0%} percentile interval ({result.n_resamples} "
                 "resamples) over " if result.n_resamples else "(no intervals: --n-resamples 0) ") + "n = pairs",
             "row l = 0 is the cumulative curve; n/a = undefined (fewer than --min-pairs pairs, or all tied)"]
    return parts + footer(result, notes)


def _curve_table(result):
    """Rows: the upper edge; columns: metrics (in blocks that fit the width)."""
    k = result.upper.shape[1]

    def build(columns) -> Table:
        table = Table()
        table.add_column("pairs", justify="right", no_wrap=True)
        for a in columns:
            table.add_column(result.metrics[a], justify="right")
        for j in range(k):
            label = f"{result.fractions[j]:.0%}" if result.fractions is not None else f"u={result.upper[0, j]:.3g}"
            cells = []
            for a in columns:
                text = _cell(result, a, 0, j)
                text.append(f"\nu={_edge(result.upper[a, j])}", style="dim")
                cells.append(text)
            table.add_row(label, *cells)
        return table

    title = Text(f"r_SYS Delta(0, u): Kendall tau of the pairs closest in metric score, vs {result.human}")
    notes = ["cell: tau (.42 = 0.42) over its interval over n = pairs over the upper edge u"]
    return [title, ColumnBlocks(build, len(result.metrics))] + footer(result, notes)


# -- topk -----------------------------------------------------------------------------------------------------

def _topk_table(result):
    table = Table(title=f"{result.coefficient} with {result.human} over the top-k systems by human score",
                  title_justify="left")
    table.add_column("k", justify="right")
    for metric in result.metrics:
        table.add_column(metric, justify="right")
    for g, k in enumerate(result.ks):
        cells = []
        for a in range(len(result.metrics)):
            text = Text(number(float(result.statistic[a, g]), 2), style="bold")
            if result.n_resamples:
                text.append(" " + interval(result.ci_low[a, g], result.ci_high[a, g]), style="dim")
            cells.append(text)
        table.add_row(str(int(k)), *cells)
    notes = [f"[low, high]: BOOT-INPUTS {result.confidence_level:.0%} percentile intervals (top k re-selected on "
             f"every resample), {result.n_resamples} resamples" if result.n_resamples else "no intervals",
             "top 3 by human score: " + ", ".join(result.top_systems[int(result.ks.argmax())][:3])]
    return [table] + footer(result, notes)


# -- normality ------------------------------------------------------------------------------------------------

def _normality_table(result):
    frame = result.to_frame()
    table = frame_table(frame, title="Shapiro-Wilk: system scores (W, p) and the share of inputs rejecting "
                                     f"normality at alpha = {result.alpha:g}",
                        columns=["scorer", "human", "system_w", "system_pvalue", "input_share_rejected",
                                 "n_inputs_tested", "n_inputs_skipped"])
    return [table] + footer(result, ["inputs with fewer than 3 scores or all scores tied are skipped"])


# -- gap ------------------------------------------------------------------------------------------------------

def _gap_tables(result):
    parts = []
    if result.deltas.size:
        table = Table(title=f"P(humans ({result.human}) agree with the metric's ordering of two systems | gap)",
                      title_justify="left")
        for column in ("metric", "gap", "probability", "interval", "note"):
            table.add_column(column, justify="right" if column in ("gap", "probability") else "left")
        for a, metric in enumerate(result.metrics):
            for k, d in enumerate(result.deltas):
                note = "extrapolated" if d > result.max_gap[a] else ""
                table.add_row(metric, number(float(d), 4), number(float(result.at_delta[a, k]), 3),
                              interval(result.at_delta_low[a, k], result.at_delta_high[a, k]),
                              note or result.reasons[a])
        parts.append(table)
    summary = Table(title="Fit over all system pairs", title_justify="left")
    for column in ("metric", "pairs", "excluded (ties)", "raw agreement", "closest bin: mean gap",
                   "closest bin: raw agreement", "largest gap", "p(largest gap)"):
        summary.add_column(column, justify="left" if column == "metric" else "right")
    for a, metric in enumerate(result.metrics):
        summary.add_row(metric, str(int(result.n_pairs[a])), str(int(result.n_excluded[a])),
                        number(float(result.agreement[a])), number(float(result.bin_gap[a, 0]), 4),
                        number(float(result.bin_agreement[a, 0])), number(float(result.max_gap[a]), 4),
                        number(float(result.probability[a, -1])))
    parts.append(summary)
    notes = ["curve: Firth logistic regression of agreement on |gap|; band: BOOT-INPUTS "
             f"{result.confidence_level:.0%}, centred on the estimate ({result.n_resamples} resamples)"]
    return parts + footer(result, notes)


# -- plan -----------------------------------------------------------------------------------------------------

def _plan_tables(result):
    columns = ["n_systems", "n_inputs", "extrapolated", "width_mean", "width_sd"]
    if result.metric_b:
        columns += ["power", "power_se"]
    title = (f"Simulated campaigns from the pilot ({result.pilot_shape[0]} x {result.pilot_shape[1]}): "
             f"width of the {result.confidence_level:.0%} BOOT-{result.method.upper()} interval of the "
             f"{result.level}-level {result.coefficient} of {result.metric}")
    if result.metric_b:
        title += f"; power of {result.test} test {result.metric} > {result.metric_b} at alpha {result.alpha:g}"
    parts = [frame_table(result.to_frame(), title=title, columns=columns)]
    answers = result.answer_frame()
    answer_columns = ["n_systems", "width_floor"]
    if result.target_width is not None:
        answer_columns += ["target_width", "required_inputs", "required_inputs_fit"]
    if result.metric_b:
        answer_columns += ["target_power", "required_inputs_power"]
    if result.target_width is not None:  # a fitted answer beyond the grid is marked where it is printed
        answers["required_inputs_fit"] = [
            f"{fit:,.0f} (beyond the grid)" if beyond else fit
            for fit, beyond in zip(answers["required_inputs_fit"], answers["fit_beyond_grid"])]
    parts.append(frame_table(answers, title="How many judged inputs?", columns=answer_columns))
    notes = ["width_floor, required_inputs_fit: from width(m) = floor + c / sqrt(m) fitted to the simulated means "
             "(inf: more inputs alone cannot reach the target; judge more systems)",
             "extrapolated: more inputs than the pilot, drawn with replacement from the pilot's",
             f"(beyond the grid): more inputs than the largest simulated ({max(result.n_inputs):,}): the fitted curve"
             " extrapolated, not simulated"]
    return parts + footer(result, notes)


# -- verdicts and systems: a frame with a title and a footer --------------------------------------------------

def _verdicts(result, options, frame, fmt, output) -> str:
    confidence_level = options["confidence_level"]
    title = (f"verdicts against {result.human}: {options['test']} test over {len(result.pairs)} system pairs,"
             f" two-sided, significant at {1 - confidence_level:g}")
    counts = {v: int((result.human_verdicts == v).sum()) for v in ("better", "worse", "tie")}
    footer_text = ("human verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items())
                   + "\nconfusion: rows = human better | worse | tie, columns = metric better worse tie")
    return titled(result, fmt, frame, title, footer_text)


def _systems(result, options, frame, fmt, output) -> str:
    title = (f"{result.scorer}: {options['test']} test, {options['alternative']}, {options['correction']} over"
             f" {len(result.pairs)} pairs, significant at {1 - options['confidence_level']:g}")
    footer_text = f"{int(result.significant.sum())} of {len(result.pairs)} pairs differ significantly"
    return titled(result, fmt, frame, title, footer_text, output_width(output))


VIEWS: dict[str, Callable[..., str]] = {
    "delta": _delta,
    "topk": terminal(_topk_table),
    "normality": terminal(_normality_table),
    "gap": terminal(_gap_tables),
    "plan": terminal(_plan_tables),
    "verdicts": _verdicts,
    "systems": _systems,
}
"""Analysis name -> its view (an analysis without one prints its frame as a table)."""
