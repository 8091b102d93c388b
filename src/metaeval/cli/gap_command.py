"""`metaeval gap`: probability that humans confirm the metric's ordering of two systems, by metric gap."""
from __future__ import annotations

import click
from rich.table import Table

from .. import defaults
from ..analyses.gap import gap_agreement
from .analysis_output import footer, interval, number, output_options, render
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


@click.command()
@source_options
@click.option("--delta", "deltas", type=float, multiple=True,
              help="A metric gap (metric units; repeatable), e.g. --delta 0.5 for +0.5 on a 0-100 scale.")
@click.option("--grid-points", type=int, default=defaults.GAP_GRID_POINTS, show_default=True,
              help="Points of the curve (shown when no --delta is given).")
@click.option("--n-bins", type=int, default=defaults.GAP_BINS, show_default=True,
              help="Equal-count bins of the raw agreement rates.")
@click.option("--full-test-set", is_flag=True,
              help="Average each metric over all its inputs, the human over the judged ones.")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Confidence level of the bands.')
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@output_options
def gap(dataset, dataset_options, scores, human, metrics, deltas, grid_points, n_bins, full_test_set,
        confidence_level, corpus_texts, n_resamples, seed, fmt, output):
    """How often do humans confirm a metric gain of a given size? (smoothed over all system pairs)"""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    result = gap_agreement(ds, chosen_metrics(ds, human, metrics), human, deltas=deltas or None,
                           grid_points=grid_points, n_bins=n_bins, full_test_set=full_test_set,
                           n_resamples=n_resamples, confidence_level=confidence_level, rng=seed,
                           corpus_statistics=corpus or None)
    frame = result.to_frame() if deltas else result.curve_frame()
    render(result, fmt, frame, _tables, output)


def _tables(result):
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
