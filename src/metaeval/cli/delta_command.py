"""`metaeval delta`: r_SYS Delta(l, u), system-level Kendall tau over pairs by metric-score gap."""
from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from .. import defaults
from ..analyses.delta import BOUNDARIES, delta_correlations
from ..report.render import ColumnBlocks
from .analysis_output import (
    NumberList,
    footer,
    number,
    output_options,
    render,
)
from .common import (
    chosen_metrics,
    corpus_options,
    corpus_statistics_for,
    load_source,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option

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
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help="Confidence level of the intervals.")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
def delta(dataset, dataset_options, scores, human, metrics, fractions, edges, boundary, min_pairs, full_test_set,
          view, confidence_level, corpus_texts, n_resamples, seed, fmt, output):
    """Kendall tau over the system pairs whose metric gap lies in [l, u] (Deutsch et al. 2022)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    with progress_bar() as bar:
        result = delta_correlations(
            ds, chosen_metrics(ds, human, metrics), human, fractions=fractions, edges=edges, boundary=boundary,
            min_pairs=min_pairs, full_test_set=full_test_set, n_resamples=n_resamples,
            confidence_level=confidence_level, rng=seed, corpus_statistics=corpus or None,
            progress=bar.task("bootstrap resamples", total=n_resamples) if n_resamples else None,
        )
    frame = result.to_frame() if view == "grid" else result.curve_frame()
    render(result, fmt, frame, _grid_tables if view == "grid" else _curve_table, output)


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
