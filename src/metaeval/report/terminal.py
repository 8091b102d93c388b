"""Rich renderings of results for the terminal."""
from __future__ import annotations

import math

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..results import ComparisonResult, CorrelationResult, MetricComparisonResult


def _number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{digits}f}"


def _cell(result: CorrelationResult) -> Text:
    text = Text(_number(result.statistic), style="bold")
    if result.ci is not None:
        text.append(f"\n[{_number(result.ci[0], 2)}, {_number(result.ci[1], 2)}]", style="dim")
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
    parts.append(Text(f"signature: {table.signature}", style="dim"))
    return Group(*parts)


def comparison_matrix(result: MetricComparisonResult) -> Group:
    """Metrics sorted by rank; in row i, character j is '■' where metric i beats metric j after correction."""
    order = sorted(range(len(result.metrics)), key=lambda i: (result.ranks[i], -_sort_key(result, i)))
    title = (
        f"{result.level}-level {result.coefficient}: {result.test} test ({result.method or 'analytic'}),"
        f" {result.correction} over the {result.family}, alpha {result.alpha:g}"
    )
    out = Table(title=title, title_justify="left")
    out.add_column("rank", justify="right", no_wrap=True)
    out.add_column("#", justify="right", style="dim")
    out.add_column("metric", style="cyan", no_wrap=True)
    out.add_column("r", justify="right", no_wrap=True, min_width=6)
    out.add_column("beats #1..#%d" % len(order), no_wrap=True)
    for position, i in enumerate(order):
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
        out.add_row(str(result.ranks[i]), str(position + 1), result.metrics[i],
                    _number(result.correlations[i].statistic), marks)
    legend = Text("■ the row metric correlates significantly better than metric #j; · not significant",
                  style="dim")
    return Group(out, legend, Text(f"signature: {result.signature}", style="dim"))


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
