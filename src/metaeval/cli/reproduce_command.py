"""`metaeval reproduce`: published procedures that metaeval does not recommend, to reproduce papers' numbers."""
from __future__ import annotations

import click

from ..analyses.paper import PAPER_DOCUMENT_ALPHA, paper_summary_level
from .analysis_output import footer, frame_table, render
from .common import declare, group, option, output_options, source_options, tie_tolerance_option
from .source import chosen_metrics, load_source

COEFFICIENTS = ("kendall", "kendall-b", "kendall-c", "pearson", "spearman")


@group()
def reproduce() -> None:
    """Reproduce published numbers with procedures metaeval does not recommend.

    Each subcommand copies a published procedure through explicitly named options (never defaults) and
    warns; docs/reproductions.md explains each choice and its bias.
    """


@reproduce.command("summary-level")
@source_options
@option("coefficient", type=click.Choice(COEFFICIENTS), default="kendall-b",
        help="Per-document coefficient (REALSumm: Kendall tau-b).")
@declare("paper_document_filter", dict(
    is_flag=True, help="Average only the documents whose correlation is significant (p <= --alpha), as the"
                       " REALSumm notebook: biased upward, for reproduction only (warns)."))
@option("alpha", default=PAPER_DOCUMENT_ALPHA, help="Level of the document filter.")
@tie_tolerance_option
@output_options
def summary_level(source, coefficient, paper_document_filter, alpha, tie_tolerance, format, output):
    """Summary-level correlation, optionally over the significant documents only (REALSumm Exp-IV)."""
    ds, human = load_source(source)
    result = paper_summary_level(ds, human, chosen_metrics(ds, human, source.metric), coefficient=coefficient,
                                 significant_documents_only=paper_document_filter, alpha=alpha,
                                 tie_tolerance=tie_tolerance)
    render(result, format, result.to_frame(), _table, output)


def _table(result):
    kept = (f"documents with p <= {result.alpha:g} only (REALSumm's filter: biased upward)"
            if result.significant_documents_only else "every document with a defined correlation")
    table = frame_table(result.to_frame(), digits=4,
                        title=f"summary-level {result.coefficient} with {result.human}: mean over {kept}",
                        columns=["metric", "statistic", "n_used", "n_undefined", "n_not_significant"])
    return [table] + footer(result, ["n_not_significant: defined documents left out by the filter"])
