"""`metaeval extrinsic agreement|correlate|partition`: extrinsic evaluation of summaries (Dorr et al. 2005)."""
from __future__ import annotations

from collections.abc import Callable

import click
from rich.table import Table

from .. import defaults
from ..analyses.extrinsic import MEASURES, relevance_agreement
from ..analyses.partition import UNITS, extrinsic_correlation, scoreset_partition_correlation
from .analysis_output import footer, number, render
from .common import declare, group, option, output_options, seed_option, source_options
from .source import chosen_metrics, load_source


@group()
def extrinsic() -> None:
    """Extrinsic evaluation: Relevance-Prediction, LDC-Agreement, partition-averaged r."""


def _partition_options(sizes_default: str) -> Callable:
    def decorate(command: Callable) -> Callable:
        options = [
            option("sizes", default=sizes_default, show_default=True,
                   help="Cell sizes p (comma-separated): points averaged per cell."),
            declare("n_partitions", dict(type=int, default=defaults.PARTITION_REPEATS, show_default=True,
                                         help="Random partitions per size.")),
            option("confidence_level", help="Share of the partitions' r inside the reported spread."),
        ]
        for decorator in reversed(options):
            command = decorator(command)
        return command
    return decorate


@extrinsic.command()
@click.argument("judgments", type=click.Path(dir_okay=False))
@option("full_text")
@option("metric", help="A metric column to average per category (repeatable).")
@declare("by_group", dict(is_flag=True, help="Rates per group (the table's `group` column) as well."))
@output_options
def agreement(judgments, full_text, metric, by_group, format, output):
    """Relevance-Prediction and LDC-Agreement of each surrogate condition."""
    result = relevance_agreement(judgments, full_text=full_text, metrics=metric, by_group=by_group)
    render(result, format, result.to_frame(), _agreement_tables, output)


@extrinsic.command()
@click.argument("judgments", type=click.Path(dir_okay=False))
@option("metric", multiple=False, required=True, help="The metric column (the surrogate's score).")
@option("measure", multiple=True, type=click.Choice(MEASURES), help="Agreement measure (repeatable; default both).")
@declare("unit", dict(type=click.Choice(UNITS), default=defaults.EXTRINSIC_UNIT, show_default=True,
                      help="The data point: a document (agreement over its subjects) or one judgment."))
@option("full_text")
@_partition_options("1,2,4")
@seed_option
@output_options
def correlate(judgments, metric, measure, unit, full_text, sizes, n_partitions, confidence_level, seed, format,
              output):
    """Partition-averaged r between a metric and agreement, per condition (Table 5)."""
    result = extrinsic_correlation(judgments, metric=metric, measures=measure or MEASURES, unit=unit,
                                   full_text=full_text,
                                   sizes=sizes, n_partitions=n_partitions, confidence_level=confidence_level,
                                   rng=seed)
    render(result, format, result.to_frame(), _partition_tables, output)


@extrinsic.command()
@source_options
@_partition_options(str(defaults.PARTITION_SIZE))
@seed_option
@output_options
def partition(source, sizes, n_partitions, confidence_level, seed, format, output):
    """Partition-averaged r between metrics and the human over the scored cells."""
    ds, human = load_source(source)
    result = scoreset_partition_correlation(ds, chosen_metrics(ds, human, source.metric), human, sizes=sizes,
                                            n_partitions=n_partitions, confidence_level=confidence_level, rng=seed)
    render(result, format, result.to_frame(), _partition_tables, output)


def _agreement_tables(result):
    rates = Table(title="Agreement with the subject's own full-text judgment (RP) and with the gold label (LDC)",
                  title_justify="left")
    for column in ("condition", "group", "judgments", "paired", "relevance-prediction", "gold", "ldc-agreement"):
        rates.add_column(column, justify="left" if column in ("condition", "group") else "right")
    for row in result.rates.itertuples(index=False):
        rates.add_row(row.condition, row.group, str(row.n_judgments), str(row.n_paired),
                      number(row.relevance_prediction), str(row.n_gold), number(row.ldc_agreement))
    categories = Table(title="Surrogate / full-text judgments (Dorr et al. Table 6)", title_justify="left")
    columns = ["condition", "surrogate", "full text", "n", "share"]
    for metric in result.metrics:
        columns += [f"{metric} mean", f"{metric} std"]
    for column in columns:
        categories.add_column(column, justify="left" if column in ("condition", "surrogate", "full text") else "right")
    for row in result.categories.itertuples(index=False):
        values = [row.condition, row.surrogate, row.full_text, str(row.n), number(row.share)]
        values += [number(v) for v in row[5:]]
        categories.add_row(*values)
    notes = [f"{result.n_unpaired} surrogate judgments without the subject's full-text judgment"] if result.n_unpaired else []
    return [rates, categories, *footer(result, notes)]


def _partition_tables(result):
    table = Table(title="Pearson r over cell means of random partitions (Dorr et al. 2005)", title_justify="left")
    for column in ("label", "size", "cells", "mean r", "median r", "q1", "q3", "spread", "undefined"):
        table.add_column(column, justify="left" if column == "label" else "right")
    for row in result.table.itertuples(index=False):
        table.add_row(row.label, str(row.size), str(row.n_cells), number(row.mean), number(row.median),
                      number(row.q1), number(row.q3), f"[{number(row.spread_low)}, {number(row.spread_high)}]",
                      str(row.n_undefined))
    notes = [f"{result.n_partitions} partitions per size; spread: the central {result.confidence_level:.0%} of "
             "the partitions' r (not a confidence interval)"]
    return [table, *footer(result, notes)]
