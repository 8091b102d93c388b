"""`metaeval topk`: correlation over the k best systems by human score (REALSumm Exp-II)."""
from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from .. import defaults
from ..analyses.topk import topk_correlations
from ..vocabulary import COEFFICIENT_CHOICES
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
@click.option("--ks", type=NumberList(int), default=None, help="Numbers of top systems (default N down to 3).")
@click.option("--coefficient", type=click.Choice(COEFFICIENT_CHOICES), default=defaults.COEFFICIENT,
              show_default=True,
              help='Coefficient of the correlations.')
@click.option("--full-test-set", is_flag=True,
              help="Average each metric over all its inputs, the human over the judged ones.")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Confidence level of the intervals.')
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@output_options
def topk(dataset, dataset_options, scores, human, metrics, ks, coefficient, full_test_set, confidence_level,
         corpus_texts, n_resamples, seed, fmt, output):
    """System-level correlation over the k best systems by human score (Bhandari et al. 2020)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    result = topk_correlations(ds, chosen_metrics(ds, human, metrics), human, ks=ks, coefficient=coefficient,
                               full_test_set=full_test_set, n_resamples=n_resamples,
                               confidence_level=confidence_level, rng=seed, corpus_statistics=corpus or None)
    render(result, fmt, result.to_frame(), _table, output)


def _table(result):
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
