"""`metaeval correlate` and `metaeval compare`: the correlation table and the significance matrix."""
from __future__ import annotations

import click

from .. import _validation as iv
from .. import defaults
from ..correlation.matrix import compare_metrics
from ..correlation.table import correlation_table
from ..report import terminal
from ..report.render import render_text
from ..vocabulary import (
    ALTERNATIVES,
    CI_METHODS,
    COEFFICIENT_CHOICES,
    CORRECTIONS,
    FAMILIES,
    LEVEL_CHOICES,
    METRIC_TESTS,
    PVALUE_METHODS,
    RESAMPLING_METHODS,
)
from .common import (
    chosen_metrics,
    corpus_options,
    corpus_statistics_for,
    emit,
    load_source,
    output_options,
    output_width,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option


@click.command()
@source_options
@click.option("--level", "levels", multiple=True, type=click.Choice(LEVEL_CHOICES),
              help=f"Level (repeatable; default: {', '.join(defaults.REPORT_LEVELS)}; only system with one input).")
@click.option("--coefficient", "coefficients", multiple=True, type=click.Choice(COEFFICIENT_CHOICES),
              help=f"Coefficient (repeatable; default: {', '.join(defaults.REPORT_COEFFICIENTS)}).")
@click.option("--ci", type=click.Choice(CI_METHODS), default=defaults.TABLE_CI, show_default=True,
              help="Confidence interval of every correlation.")
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help="Confidence level of the intervals.")
@click.option("--full-test-set", is_flag=True,
              help="System level: average each metric over all its inputs, the human over the judged ones.")
@click.option("--pvalue-method", type=click.Choice(PVALUE_METHODS), default=defaults.PVALUE_METHOD, show_default=True,
              help="p-value of each correlation: scipy's (system, global, partial levels), permutation, none.")
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.CORRELATION_ALTERNATIVE,
              show_default=True, help="H1 of the p-values ('greater': a positive relation).")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
def correlate(dataset, dataset_options, scores, human, metrics, levels, coefficients, ci, confidence_level,
              full_test_set, pvalue_method, alternative, corpus_texts, n_resamples, seed, fmt, output):
    """Correlate metrics with the human score, with confidence intervals and p-values."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    chosen = chosen_metrics(ds, human, metrics)
    coefficients = coefficients or defaults.REPORT_COEFFICIENTS
    cells = len(chosen) * len(levels or iv.default_levels(ds)) * len(coefficients)
    with progress_bar() as bar:
        table = correlation_table(
            ds, human, chosen, levels=levels or None, coefficients=coefficients,
            ci=ci, n_resamples=n_resamples, confidence_level=confidence_level, full_test_set=full_test_set,
            rng=seed, pvalue_method=pvalue_method, alternative=alternative, corpus_statistics=corpus or None,
            progress=bar.task("correlations", total=cells),
        )
    emit(render_text(table, fmt, terminal=terminal.correlation_table, width=output_width(output)), output)


@click.command()
@source_options
@click.option("--level", type=click.Choice(LEVEL_CHOICES), default=defaults.LEVEL, show_default=True,
              help="Level of the correlations compared.")
@click.option("--coefficient", type=click.Choice(COEFFICIENT_CHOICES), default=defaults.COEFFICIENT,
              show_default=True, help="Coefficient of the correlations compared.")
@click.option("--test", type=click.Choice(METRIC_TESTS), default=defaults.METRIC_TEST, show_default=True,
              help="Test of each pair (williams: Pearson at the system or global level only).")
@click.option("--method", type=click.Choice(RESAMPLING_METHODS), default=defaults.RESAMPLING_METHOD, show_default=True,
              help="Which cells are resampled / swapped together.")
@click.option("--alternative", type=click.Choice(ALTERNATIVES), default=defaults.ALTERNATIVE, show_default=True,
              help="greater: H1 is r(row metric) > r(column metric).")
@click.option("--correction", type=click.Choice(CORRECTIONS), default=defaults.CORRECTION, show_default=True,
              help="Multiple-comparison correction of the p-values.")
@click.option("--family", type=click.Choice(FAMILIES), default=defaults.FAMILY, show_default=True,
              help="The p-values corrected together.")
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help="Significance level of the marks and the clusters.")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
def compare(dataset, dataset_options, scores, human, metrics, level, coefficient, test, method, alternative,
            correction, family, alpha, corpus_texts, n_resamples, seed, fmt, output):
    """Test every pair of metrics; print the significance matrix and cluster ranks."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    with progress_bar() as bar:
        counted = bar.task("resamples", total=n_resamples) if test != "williams" else None
        result = compare_metrics(
            ds, chosen_metrics(ds, human, metrics), human, level=level, coefficient=coefficient, test=test,
            method=method, alternative=alternative, n_resamples=n_resamples, correction=correction,
            family=family, alpha=alpha, rng=seed, progress=counted, corpus_statistics=corpus or None,
        )
    emit(render_text(result, fmt, terminal=terminal.comparison_matrix, width=output_width(output)), output)
