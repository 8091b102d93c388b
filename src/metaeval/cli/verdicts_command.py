"""`metaeval verdicts`: the humans' and the metrics' verdicts on every system pair, and their agreement."""
from __future__ import annotations

import click

from .. import defaults
from ..analyses.verdicts import system_verdicts
from ..vocabulary import SYSTEM_TESTS
from .common import (
    chosen_metrics,
    corpus_options,
    corpus_statistics_for,
    emit,
    load_source,
    output_options,
    resamples_option,
    seed_option,
    source_options,
)
from .systems_command import render


@click.command()
@source_options
@click.option("--test", type=click.Choice(SYSTEM_TESTS), default=defaults.SYSTEM_TEST, show_default=True,
              help='Test of each pair of systems.')
@click.option("--confidence-level", type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
              help='Confidence level of the tests (significance at 1 - this).')
@click.option("--pairs", "show_pairs", is_flag=True, help="Print every pair's verdicts instead of the summary.")
@corpus_options
@resamples_option
@seed_option
@output_options
def verdicts(dataset, dataset_options, scores, human, metrics, test, confidence_level, show_pairs, corpus_texts,
             n_resamples, seed, fmt, output):
    """Pairwise system verdicts (better / worse / tie) of humans and metrics; weighted F1 (REALSumm Exp-III)."""
    ds, human = load_source(dataset, dataset_options, scores, human)
    corpus = corpus_statistics_for(ds, *corpus_texts)
    result = system_verdicts(ds, chosen_metrics(ds, human, metrics), human, test=test,
                             confidence_level=confidence_level, n_resamples=n_resamples, rng=seed,
                             corpus_statistics=corpus or None)
    frame = result.pairs_frame() if show_pairs else result.to_frame()
    if fmt == "table" and not show_pairs:
        # compact: the confusion matrix as three rows "better | worse | tie" of the human verdicts
        frame = frame[["metric", "f1", "agreement", "n_used", "n_skipped"]].assign(
            confusion=[" | ".join(" ".join(str(v) for v in row) for row in cm) for cm in result.confusion])
    title = (f"verdicts against {human}: {test} test over {len(result.pairs)} system pairs, two-sided, "
             f"significant at {1 - confidence_level:g}")
    counts = {v: int((result.human_verdicts == v).sum()) for v in ("better", "worse", "tie")}
    footer = ("human verdicts: " + ", ".join(f"{k} {v}" for k, v in counts.items())
              + "\nconfusion: rows = human better | worse | tie, columns = metric better worse tie")
    emit(render(result, fmt, frame, title, footer), output)
