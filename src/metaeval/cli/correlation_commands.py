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
    CI_METHODS,
    METRIC_TESTS,
    PVALUE_METHODS,
)
from .common import (
    corpus_options,
    declare,
    emit,
    option,
    output_options,
    output_width,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import chosen_metrics, corpus_statistics_for, load_source


@click.command()
@source_options
@option("level", multiple=True, default=None, show_default=False,
        help=f"Level (repeatable; default: {', '.join(defaults.REPORT_LEVELS)}; only system with one input).")
@option("coefficient", multiple=True, default=None, show_default=False,
        help=f"Coefficient (repeatable; default: {', '.join(defaults.REPORT_COEFFICIENTS)}).")
@declare("ci", dict(type=click.Choice(CI_METHODS), default=defaults.TABLE_CI, show_default=True,
                    help="Confidence interval of every correlation."))
@option("confidence_level")
@option("full_test_set", help="System level: average each metric over all its inputs, the human over the judged ones.")
@declare("pvalue_method", dict(type=click.Choice(PVALUE_METHODS), default=defaults.PVALUE_METHOD, show_default=True,
                               help="p-value of each correlation: scipy's (system, global, partial levels),"
                                    " permutation, none."))
@option("alternative", default=defaults.CORRELATION_ALTERNATIVE,
        help="H1 of the p-values ('greater': a positive relation).")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
def correlate(source, level, coefficient, ci, confidence_level, full_test_set, pvalue_method, alternative,
              corpus_texts, n_resamples, seed, tie_tolerance, format, output):
    """Correlate metrics with the human score, with confidence intervals and p-values."""
    ds, human = load_source(source, n_resamples=n_resamples)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    chosen = chosen_metrics(ds, human, source.metric)
    coefficients = coefficient or defaults.REPORT_COEFFICIENTS
    cells = len(chosen) * len(level or iv.default_levels(ds)) * len(coefficients)
    with progress_bar() as bar:
        table = correlation_table(
            ds, human, chosen, levels=level or None, coefficients=coefficients,
            ci=ci, n_resamples=n_resamples, confidence_level=confidence_level, full_test_set=full_test_set,
            rng=seed, pvalue_method=pvalue_method, alternative=alternative, corpus_statistics=corpus or None,
            progress=bar.task("correlations", total=cells), tie_tolerance=tie_tolerance,
        )
    emit(render_text(table, format, terminal=terminal.correlation_table, width=output_width(output)), output)


@click.command()
@source_options
@option("level", help="Level of the correlations compared.")
@option("coefficient", help="Coefficient of the correlations compared.")
@option("test", type=click.Choice(METRIC_TESTS), default=defaults.METRIC_TEST, show_default=True,
        help="Test of each pair (williams: Pearson at the system or global level only).")
@option("method")
@option("alternative", help="greater: H1 is r(row metric) > r(column metric).")
@option("correction")
@option("family")
@option("alpha", help="Significance level of the marks and the clusters.")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@option("explain")
@progress_option
@output_options
def compare(source, level, coefficient, test, method, alternative, correction, family, alpha, corpus_texts,
            n_resamples, seed, tie_tolerance, explain, format, output):
    """Test every pair of metrics; print the significance matrix and cluster ranks."""
    ds, human = load_source(source, n_resamples=n_resamples)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    if explain and test == "permutation" and not corpus:
        from ..correlation.kernel_routes import explain_routes

        report = explain_routes(ds, chosen_metrics(ds, human, source.metric), human, level=level,
                                coefficient=coefficient, method=method, tie_tolerance=tie_tolerance)
        click.echo(report.text(), err=True)
    with progress_bar() as bar:
        counted = bar.task("resamples", total=n_resamples) if test != "williams" else None
        result = compare_metrics(
            ds, chosen_metrics(ds, human, source.metric), human, level=level, coefficient=coefficient, test=test,
            method=method, alternative=alternative, n_resamples=n_resamples, correction=correction,
            family=family, alpha=alpha, rng=seed, progress=counted, corpus_statistics=corpus or None,
            tie_tolerance=tie_tolerance,
        )
    emit(render_text(result, format, terminal=terminal.comparison_matrix, width=output_width(output)), output)
