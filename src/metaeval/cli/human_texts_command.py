"""`metaeval human jackknife|cross`: human summaries scored against each other, and systems among them."""
from __future__ import annotations

import click

from ..human import cross_comprehension, cross_comprehension_labels, jackknife_scores, read_summary_texts
from ..human.cross import read_cross_judgments
from .human_command import _output, _render, human
from .common import emit
from .main import SOURCE_FILE
from .score_command import parse_metric_options

DEFAULT_METRIC = "rouge"
DEFAULT_MEASURE = "rouge-2.recall"
"""The measure of `human jackknife` / `human cross` unless ``--measure`` (ROUGE-2 recall, as DUC reported)."""


def _texts_options(command):
    options = [
        click.option("--texts", type=click.Path(dir_okay=False), help="JSON Lines: {doc_id, system_id, summary,"
                     " references: [...]} per line (the format of summeval/texts.jsonl)."),
        click.option("--n-documents", type=int, help="Only the first N documents of the file."),
        click.option("--metric", default=DEFAULT_METRIC, show_default=True,
                     help="The metric (a name of metaeval.metrics.METRICS)."),
        click.option("--metric-option", "metric_options", multiple=True, metavar="METRIC.KEY=VALUE",
                     help="An option of the metric, e.g. rouge.stem=true (repeatable)."),
        click.option("--measure", default=DEFAULT_MEASURE, show_default=True,
                     help="The metric's score used, e.g. rouge-2.recall, rouge-1.f1."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _scorer(metric, metric_options):
    from ..metrics.registry import get_scorer

    return get_scorer(metric, **parse_metric_options((metric,), metric_options)[metric])


def _texts(texts, n_documents):
    SOURCE_FILE.set(str(texts))
    return read_summary_texts(texts, n_documents=n_documents)


@human.command("jackknife")
@_texts_options
@_output
def jackknife(texts, n_documents, metric, metric_options, measure, fmt, output):
    """Jackknifed scores of systems and of each human reference (Lin 2004)."""
    if texts is None:
        raise click.UsageError("Missing option '--texts'.")
    candidates, references = _texts(texts, n_documents)
    result = jackknife_scores(candidates, references, scorer=_scorer(metric, metric_options), measure=measure)
    n_docs, m = result.scoreset.shape[1], result.n_references
    lines = [f"jackknifed {measure}: {len(candidates)} systems and {m} human references, each scored against"
             f" {m - 1} references, {n_docs} documents",
             f"{result.n_systems_below_humans} of {len(candidates)} systems score below every human"]
    emit(_render(result, result.peers, fmt, lines), output)


@human.command("cross")
@_texts_options
@click.option("--judgments", type=click.Path(dir_okay=False),
              help="Instead of --texts: judged questions, columns document,summary,questions,label (CSV/TSV/...).")
@click.option("--humans-only", is_flag=True, help="With --texts: leave the system summaries out.")
@_output
def cross(texts, n_documents, metric, metric_options, measure, judgments, humans_only, fmt, output):
    """Cross-comprehension of human summaries (Kolluru & Gotoh 2005)."""
    if (texts is None) == (judgments is None):
        raise click.UsageError("exactly one of '--texts' and '--judgments' must be given.")
    if judgments is not None:
        SOURCE_FILE.set(str(judgments))
        result = cross_comprehension_labels(read_cross_judgments(judgments))
        o = result.overall
        lines = [f"cross-comprehension: {result.n_judgments} judged questions; overall relevant {o['relevant']:.1%},"
                 f" relevant or partial {o['relevant_or_partial']:.1%}, found {o['found']:.1%}"]
        emit(_render(result, result.to_frame(), fmt, lines), output)
        return
    candidates, references = _texts(texts, n_documents)
    scorer = _scorer(metric, metric_options)
    result = cross_comprehension(references, scorer=scorer, measure=measure,
                                 candidates=None if humans_only else candidates)
    m = len(result.matrix)
    lines = [f"cross-comprehension under {measure}: {m} human summaries per document, {len(result.documents)}"
             f" documents; human level (mean over ordered pairs of authors) {result.human_level:.4f}"]
    if fmt == "table":
        lines.append("row: summary author, column: reference author (mean over documents)")
        lines.append(result.matrix.to_string(float_format=lambda v: f"{v:.3f}", na_rep="-"))
    emit(_render(result, result.peers, fmt, lines), output)

