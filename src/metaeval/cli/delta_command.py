"""`metaeval delta`: r_SYS Delta(l, u), system-level Kendall tau over pairs by metric-score gap."""
from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from .. import defaults
from ..analyses.delta import BOUNDARIES, delta_correlations
from ..report.render import WIDE
from .analysis_output import (
    NumberList,
    footer,
    interval,
    number,
    output_options,
    render,
)
from .common import (
    chosen_metrics,
    load_source,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)

VIEWS = ("grid", "curve")


@click.command()
@source_options
@click.option("--fractions", type=NumberList(float), default=None,
              help="Upper edges as fractions of the closest pairs, e.g. 0.1,0.2,...,1 (the default).")
@click.option("--edges", type=NumberList(float), default=None,
              help="Upper edges in metric units instead of fractions, e.g. 0.005,0.01,0.02.")
@click.option("--boundary", type=click.Choice(BOUNDARIES), default=defaults.DELTA_BOUNDARY, show_default=True,
              help="both: cells are [l, u]; upper: cells with l > 0 are (l, u].")
@click.option("--min-pairs", type=int, default=defaults.DELTA_MIN_PAIRS, show_default=True,
              help="Cells with fewer pairs are n/a.")
@click.option("--full-test-set", is_flag=True,
              help="Average each metric over all its inputs, the human over the judged ones.")
@click.option("--view", type=click.Choice(VIEWS), default="grid", show_default=True,
              help="grid: the (l, u) heat map per metric; curve: the cumulative curve r(0, u).")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True)
@resamples_option
@seed_option
@tie_tolerance_option
@output_options
def delta(dataset, dataset_options, scores, human, metrics, fractions, edges, boundary, min_pairs, full_test_set,
          view, confidence_level, n_resamples, seed, fmt, output):
    """Kendall tau over the system pairs whose metric gap lies in [l, u] (Deutsch et al. 2022)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    result = delta_correlations(
        ds, chosen_metrics(ds, human, metrics), human, fractions=fractions, edges=edges, boundary=boundary,
        min_pairs=min_pairs, full_test_set=full_test_set, n_resamples=n_resamples,
        confidence_level=confidence_level, rng=seed,
    )
    frame = result.to_frame() if view == "grid" else result.curve_frame()
    render(result, fmt, frame, _grid_tables if view == "grid" else _curve_table, output, width=WIDE)


def _cell(result, a, i, j) -> Text:
    value = result.statistic[a, i, j]
    text = Text(number(float(value), 2), style="bold")
    if result.n_resamples:
        text.append("\n" + interval(result.ci_low[a, i, j], result.ci_high[a, i, j]), style="dim")
    text.append(f"\n{int(result.n_pairs[a, i, j])} pairs", style="dim")
    return text


def _grid_tables(result):
    parts = []
    k = result.upper.shape[1]
    for a, metric in enumerate(result.metrics):
        table = Table(title=f"{metric}: Kendall tau of the pairs with l <= |gap| <= u "
                            f"({'both edges' if result.boundary == 'both' else 'l < |gap| for l > 0'})",
                      title_justify="left")
        table.add_column("l \\ u", style="cyan", no_wrap=True)
        for j in range(k):
            label = number(float(result.upper[a, j]), 3)
            if result.fractions is not None:
                label += f"\n({result.fractions[j]:.0%})"
            table.add_column(label, justify="right", no_wrap=True)
        for i in range(k):
            cells = [Text("") if j < i else _cell(result, a, i, j) for j in range(k)]
            table.add_row(number(float(result.lower[a, i]), 3), *cells)
        parts.append(table)
    notes = [f"[low, high]: BOOT-INPUTS {result.confidence_level:.0%} percentile intervals, {result.n_resamples} "
             "resamples" if result.n_resamples else "no intervals (--n-resamples 0)",
             "row l = 0 is the cumulative curve; n/a = undefined (fewer than --min-pairs pairs, or all tied)"]
    return parts + footer(result, notes)


def _curve_table(result):
    k = result.upper.shape[1]
    table = Table(title=f"r_SYS Delta(0, u): Kendall tau of the pairs closest in metric score, vs {result.human}",
                  title_justify="left")
    table.add_column("pairs", justify="right")
    for metric in result.metrics:
        table.add_column(metric, justify="right")
    for j in range(k):
        label = f"{result.fractions[j]:.0%}" if result.fractions is not None else f"u={result.upper[0, j]:.3g}"
        cells = []
        for a in range(len(result.metrics)):
            text = _cell(result, a, 0, j)
            text.append(f"\nu = {number(float(result.upper[a, j]), 3)}", style="dim")
            cells.append(text)
        table.add_row(label, *cells)
    return [table] + footer(result)
