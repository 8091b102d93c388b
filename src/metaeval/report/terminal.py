"""Rich renderings of results for the terminal."""
from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..correlation.results import (
    ComparisonResult,
    CorrelationResult,
    MetricComparisonResult,
)
from .formats import number as _number
from .render import ColumnBlocks, SignatureLines


def _cell(result: CorrelationResult) -> Text:
    text = Text(_number(result.statistic), style="bold")
    if result.ci is not None:
        text.append(f"\n[{_number(result.ci[0], 2)}, {_number(result.ci[1], 2)}]", style="dim")
    if result.pvalue is not None and not math.isnan(result.pvalue):
        text.append(f"\n{_pvalue(result.pvalue)}", style="dim")
    if result.n_skipped:
        text.append(f"\n{result.n_skipped} skipped", style="yellow")
    return text


def correlation_table(table) -> Group:
    """One table per level: metrics as rows, coefficients as columns, each cell 'r' over '[low, high]'."""
    first = table.results[0] if table.results else None
    parts = []
    for level in table.levels:
        out = Table(title=f"{level}-level correlation with {table.human}", title_justify="left")
        out.add_column("metric", style="cyan", no_wrap=True)
        for coefficient in table.coefficients:
            out.add_column(coefficient, justify="right")
        for metric in table.metrics:
            out.add_row(metric, *[_cell(table.get(metric, level, c)) for c in table.coefficients])
        parts.append(out)
    if first is not None and first.confidence_level is not None:
        parts.append(Text(f"[low, high]: {first.interval_method} {first.confidence_level:.0%} intervals", style="dim"))
    method = table.signature.as_dict().get("pvalue")
    if method not in (None, "none"):
        grouped = [level for level in table.levels if level in ("summary", "by-system")]
        note = f"p: {method} p-values ({table.signature.as_dict().get('alternative')})"
        if method == "analytic" and grouped:
            note += (f"; none at the {' and '.join(grouped)} level (an average of correlations has no analytic"
                     " null distribution: use --pvalue-method permutation)")
        parts.append(Text(note, style="dim"))
    parts.append(SignatureLines(table.signature))
    return Group(*parts)


def comparison_matrix(result: MetricComparisonResult) -> Group:
    """Metrics sorted by rank: the cluster ranks with a row of significance marks, then every ordered pair's
    delta r(row) - r(column) over its corrected p-value, in column blocks that fit the console width."""
    order = sorted(range(len(result.metrics)), key=lambda i: (result.ranks[i], -_sort_key(result, i)))
    title = (
        f"{result.level}-level {result.coefficient}: {result.test} test ({result.method or 'analytic'}),"
        f" {result.correction} over the {result.family}, alpha {result.alpha:g}"
    )
    out = Table(title=title, title_justify="left")
    out.add_column("rank", justify="right", no_wrap=True)
    out.add_column("positions", justify="right", no_wrap=True, style="dim")
    out.add_column("#", justify="right", style="dim")
    out.add_column("metric", style="cyan", no_wrap=True)
    out.add_column("r", justify="right", no_wrap=True, min_width=6)
    out.add_column("beats #1..#%d" % len(order), no_wrap=True)
    for position, i in enumerate(order):
        out.add_row(str(result.ranks[i]), result.rank_ranges[i], str(position + 1), result.metrics[i],
                    _number(result.correlations[i].statistic), _marks(result, order, i))
    legend = Text("■ the row metric correlates significantly better than metric #j; · not significant;"
                  " positions: the places its cluster spans in the order by correlation", style="dim")

    def pairs(columns) -> Table:
        table = Table()
        table.add_column("#", justify="right", style="dim")
        table.add_column("metric", style="cyan", no_wrap=True)
        for c in columns:
            table.add_column(f"vs #{c + 1}", justify="right", no_wrap=True)
        for position, i in enumerate(order):
            cells = []
            for c in columns:
                j = order[c]
                if i == j:
                    cells.append(Text("-", style="dim"))
                    continue
                cell = Text(_signed(result.deltas[i, j]), style="bold")
                cell.append("\n" + _pvalue(result.adjusted_pvalues[i, j]), style="dim")
                if result.significant[i, j]:
                    cell.append("■", style="green")
                cells.append(cell)
            table.add_row(str(position + 1), result.metrics[i], *cells)
        return table

    pair_title = Text(f"Pairs: row minus column, delta = r(row) - r(column) over the {result.correction}-corrected"
                      f" p-value of H1: {_hypothesis(result.alternative)} (■ p < {result.alpha:g})")
    notes = [Text(f"warning: {line}", style="yellow") for line in result.warnings]
    return Group(out, legend, Text(""), pair_title, ColumnBlocks(pairs, len(order)), *notes,
                 SignatureLines(result.signature))


def _marks(result: MetricComparisonResult, order: list[int], i: int) -> Text:
    marks = Text()
    for column, j in enumerate(order):
        if column and column % 5 == 0:
            marks.append(" ")
        if i == j:
            marks.append("-", style="dim")
        elif result.significant[i, j]:
            marks.append("■", style="green")
        else:
            marks.append("·", style="dim")
    return marks


def _hypothesis(alternative: str) -> str:
    return {"greater": "r(row) > r(column)", "less": "r(row) < r(column)"}.get(alternative, "r(row) != r(column)")


def _signed(value: float) -> str:
    """A delta in 4-5 characters: +.12, -.05, +1.20, n/a."""
    value = float(value)
    if math.isnan(value):
        return "n/a"
    text = f"{value:+.2f}"
    return text.replace("+0.", "+.").replace("-0.", "-.")


def _pvalue(value: float) -> str:
    """A p-value in at most 5 characters: .004, <.001, 1, n/a."""
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if value < 0.001:
        return "<.001"
    if value >= 0.9995:
        return "1"
    return f"{value:.3f}".lstrip("0")


def _sort_key(result: MetricComparisonResult, i: int) -> float:
    value = result.correlations[i].statistic
    return -math.inf if math.isnan(value) else value


def single_result(result: CorrelationResult | ComparisonResult) -> Table:
    """A two-column table of one result's fields."""
    out = Table(show_header=False)
    out.add_column("field", style="cyan")
    out.add_column("value")
    for key, value in result.to_dict().items():
        out.add_row(key, _number(value) if isinstance(value, float) else str(value))
    return out


def report_summary(report, paths=()) -> Group:
    """The terminal summary of a report: the ranking with each level's main correlation and interval,
    one headline per analysis, what was left out, and where the files are."""
    from .analysis_sections import ANALYSES

    table = report.table
    coefficient = report.settings.get("coefficient", table.coefficients[-1])
    if coefficient not in table.coefficients:
        coefficient = table.coefficients[-1]
    ranks, spans = {}, {}
    if report.comparison is not None:
        ranks = dict(zip(report.comparison.metrics, report.comparison.ranks))
        spans = dict(zip(report.comparison.metrics, report.comparison.rank_ranges))
    first_level = table.levels[0]
    order = sorted(table.metrics, key=lambda m: (ranks.get(m, 0),
                                                 -_finite(table.get(m, first_level, coefficient).statistic)))
    d = report.dataset
    title = (f"{d.get('name') or 'user data'}: {d['systems']} systems x {d['inputs']} inputs, {coefficient}"
             f" with {table.human}")
    levels = list(table.levels)

    def build(chosen) -> Table:
        out = Table()
        if ranks:
            out.add_column("rank", justify="right", no_wrap=True)
            out.add_column("positions", justify="right", style="dim", no_wrap=True)
        out.add_column("metric", style="cyan", no_wrap=True)
        for c in chosen:
            out.add_column(levels[c], justify="right", no_wrap=True)
        for metric in order:
            cells = [str(ranks[metric]), spans[metric]] if ranks else []
            cells.append(metric)
            for c in chosen:
                r = table.get(metric, levels[c], coefficient)
                interval = f" [{_number(r.ci[0], 2)}, {_number(r.ci[1], 2)}]" if r.ci is not None else ""
                cells.append(_number(r.statistic) + interval)
            out.add_row(*cells)
        return out

    parts = [Text(title), ColumnBlocks(build, len(levels))]
    if report.comparison is not None:
        c = report.comparison
        parts.append(Text(f"rank: system-level significance cluster ({c.test}-{c.method}, {c.correction} over"
                          f" {'each row' if c.family == 'row' else 'the matrix'}, alpha {c.alpha:g});"
                          f" positions: the places the cluster spans ({max(c.ranks)} clusters of"
                          f" {len(c.metrics)} metrics)", style="dim"))
        parts.extend(Text(f"warning: {line}", style="yellow") for line in c.warnings)
    for name, result in report.analyses.items():
        headline = ANALYSES[name].headline(result)
        parts.append(Text(f"{ANALYSES[name].title}: {headline}"))
    for name, reason in report.omitted.items():
        if reason != "not requested.":
            parts.append(Text(f"{name}: left out: {reason}", style="yellow"))
    if paths:
        parts.append(Text("wrote " + ", ".join(str(p) for p in paths)))
    return Group(*parts)


def _finite(value: float) -> float:
    return -math.inf if value is None or math.isnan(value) else value
