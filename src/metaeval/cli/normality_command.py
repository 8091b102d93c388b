"""`metaeval normality`: Shapiro-Wilk tests of system scores and per-input scores."""
from __future__ import annotations

import click

from .. import defaults
from ..analyses.normality import normality as run_normality
from ..errors import ParameterError
from .analysis_output import footer, frame_table, output_options, render
from .common import load_source, source_options


@click.command()
@source_options
@click.option("--alpha", type=float, default=defaults.ALPHA, show_default=True,
              help="Level at which a test rejects normality.")
@output_options
def normality(dataset, dataset_options, scores, human, metrics, alpha, fmt, output):
    """Are system scores and per-input scores normal? (Deutsch et al. 2021, App. A)"""
    ds, human = load_source(dataset, dataset_options, scores, human)
    for metric in metrics:
        ds.require(metric, param="metric")
    if human in metrics:
        raise ParameterError(f"`--metric` must not repeat the human scorer; got {human!r}.")
    scorers = (human,) + tuple(metrics) if metrics else None
    result = run_normality(ds, scorers, alpha=alpha)
    render(result, fmt, result.to_frame(), _table, output)


def _table(result):
    frame = result.to_frame()
    table = frame_table(frame, title="Shapiro-Wilk: system scores (W, p) and the share of inputs rejecting "
                                     f"normality at alpha = {result.alpha:g}",
                        columns=["scorer", "human", "system_w", "system_pvalue", "input_share_rejected",
                                 "n_inputs_tested", "n_inputs_skipped"])
    return [table] + footer(result, ["inputs with fewer than 3 scores or all scores tied are skipped"])
