"""`metaeval stability`: ranking stability of humans and metrics, and score variance with M_jud vs M_test."""
from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from .. import defaults
from ..analyses.stability import SAMPLINGS, ranking_stability
from ..analyses.variance import score_variance
from ..errors import ParameterError
from ..report.render import ColumnBlocks
from .analysis_output import footer, number, render
from .common import (
    corpus_options,
    declare,
    option,
    output_options,
    resamples_option,
    seed_option,
    source_options,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import chosen_metrics, corpus_statistics_for, load_source

ANALYSES = ("ranking", "variance")


@click.command()
@source_options
@option("analysis", type=click.Choice(ANALYSES), default="ranking", show_default=True,
        help="ranking: Kendall between rankings of two input samples of size m; variance: variance of system"
             " scores and interval widths, judged subset vs full test set.")
@option("sizes", default=None, help="Sample sizes m, e.g. 10,20,50.")
@option("n_repetitions", default=defaults.STABILITY_REPETITIONS, show_default=True,
        help="Pairs of samples per size m.")
@declare("sampling", dict(type=click.Choice(SAMPLINGS), default=defaults.STABILITY_SAMPLING, show_default=True,
                          help="disjoint: the two samples share no input; replacement: each drawn with"
                               " replacement."))
@option("coefficient", help="Coefficient between two rankings (ranking) or of the intervals (variance).")
@option("full_test_set", help="ranking: sample each metric from all its inputs, the human from the judged ones.")
@option("confidence_level", help="variance: confidence level of the intervals.")
@corpus_options
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@option("workers", help="ranking: local worker processes (same results for the same seed).")
@option("scheduler", help="ranking: address of a running Dask scheduler, e.g. tcp://host:8786 (needs"
                          " metaeval[dask]).")
@output_options
def stability(source, analysis, sizes, n_repetitions, sampling, coefficient, full_test_set, confidence_level,
              corpus_texts, n_resamples, seed, tie_tolerance, workers, scheduler, format, output):
    """How stable are system rankings under another sample of inputs?

    Deutsch, Dror & Roth (2022), Sec. 3: the agreement of the system rankings of two samples of m inputs.
    """
    ds, human = load_source(source, n_resamples=n_resamples)
    chosen = chosen_metrics(ds, human, source.metric)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    if corpus and analysis != "ranking":
        raise ParameterError(f"`--corpus-metric` must come with `--analysis ranking`; got --analysis {analysis}.")
    if analysis == "ranking":
        chunks = -(-n_repetitions // defaults.STABILITY_CHUNK_REPETITIONS) if n_repetitions > 0 else None
        with progress_bar() as bar:
            result = ranking_stability(ds, chosen, human, sizes=sizes, n_repetitions=n_repetitions,
                                       sampling=sampling, coefficient=coefficient, full_test_set=full_test_set,
                                       rng=seed, workers=workers, scheduler=scheduler,
                                       corpus_statistics=corpus or None, tie_tolerance=tie_tolerance,
                                       progress=bar.task("repetitions (chunks of "
                                                         f"{defaults.STABILITY_CHUNK_REPETITIONS})", total=chunks))
        render(result, format, result.to_frame(), _ranking_table, output)
    else:
        with progress_bar() as bar:
            bar.task("score variance")
            result = score_variance(ds, chosen, human, coefficient=coefficient, n_resamples=n_resamples,
                                    confidence_level=confidence_level, rng=seed, tie_tolerance=tie_tolerance)
        render(result, format, result.ci_frame(), _variance_tables, output)


def _ranking_table(result):
    """One row per scorer (the human first), one column per sample size m; column blocks fit the width."""
    title = Text(f"Ranking stability: {result.coefficient} between the system rankings of two {result.sampling}"
                 f" samples of m inputs (mean ± sd over {result.n_repetitions} repetitions)")

    def build(columns) -> Table:
        table = Table()
        table.add_column("scorer", style="cyan", no_wrap=True)
        table.add_column("M", justify="right", style="dim", no_wrap=True)
        for g in columns:
            table.add_column(f"m={int(result.sizes[g])}", justify="right", no_wrap=True)
        for s, scorer in enumerate(result.scorers):
            cells = []
            for g in columns:
                mean = float(result.mean[s, g])
                cells.append(Text("n/a" if mean != mean else f"{_short(mean)}±{_short(float(result.sd[s, g]))}"))
            name = f"{scorer} (human)" if scorer == result.human else scorer
            table.add_row(name, str(int(result.n_inputs[s])), *cells)
        return table

    notes = ["M: the inputs each scorer is sampled from; cell: mean ± sd of the coefficient, .42 = 0.42"]
    return [title, ColumnBlocks(build, len(result.sizes))] + footer(result, notes)


def _short(value: float) -> str:
    """.42, -.05, 1.00: two decimals without the leading zero."""
    return f"{value:.2f}".replace("0.", ".", 1) if abs(value) < 1 else f"{value:.2f}"


def _variance_tables(result):
    table = Table(title="Variance of system scores: judged inputs (M_jud) vs full test set (M_test)",
                  title_justify="left")
    for column in ("metric", "M_jud", "M_test", "variance (jud)", "variance (test)", "reduction", "analytic"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for a, metric in enumerate(result.metrics):
        table.add_row(metric, str(int(result.n_inputs_judged[a])), str(int(result.n_inputs_test[a])),
                      number(float(result.variance_judged[a]), 3), number(float(result.variance_test[a]), 3),
                      f"{number(float(result.reduction[a]), 1)}%", f"{number(float(result.analytic_reduction[a]), 1)}%")
    widths = Table(title=f"Width of the {result.confidence_level:.0%} interval of the system-level "
                         f"{result.coefficient}", title_justify="left")
    for column in ("metric", "method", "width (jud)", "width (test)", "reduction"):
        widths.add_column(column, justify="left" if column in ("metric", "method") else "right")
    for a, metric in enumerate(result.metrics):
        for k, method in enumerate(result.methods):
            widths.add_row(metric, f"boot-{method}", number(float(result.width_judged[a, k])),
                           number(float(result.width_test[a, k])),
                           f"{number(float(result.width_reduction[a, k]), 1)}%")
    notes = [f"human variance over the judged inputs: {number(result.human_variance, 3)}"]
    return [table, widths] + footer(result, notes)
