"""`metaeval human pyramid|agreement|normalize|raters|retention|sample|jackknife|cross`: tools for human judgments
and human summaries (jackknifed scores, cross-comprehension)."""
from __future__ import annotations

from collections.abc import Callable

import click
import pandas as pd
from rich.text import Text

from .. import defaults
from ..data.datasets import load_dataset
from ..data.scoreset import ScoreSet
from ..data.writers import write_scores as write_score_file
from ..errors import ParameterError
from ..human import (
    PyramidAnnotations,
    agreement,
    cross_comprehension,
    cross_comprehension_labels,
    jackknife_scores,
    litepyramid,
    normalize,
    pyramid_match,
    read_coverage,
    read_judgments,
    read_realsumm_annotations,
    read_scu_list,
    read_selected_documents,
    read_summary_texts,
    read_votes,
    sample_documents,
    weighted_retention,
)
from ..human.agreement import LEVELS, PYRAMID_GROUPS
from ..human.cross import read_cross_judgments
from ..human.normalize import AGGREGATIONS, METHODS
from ..human.pyramid import TIES, WORKER_FILTERS
from ..report.render import SignatureLines, render_text
from .common import declare, emit, group, option, options, output_options, output_width, reading_options
from .score_command import parse_metric_options
from .source import Reading, located_by, parse_dataset_options, read_files


@group()
def human() -> None:
    """Build human scores from raw annotations and say how reliable they are."""


def _located_by(*names: str) -> Callable:
    """Data errors of the command name the file given by the first of ``names`` (without --dataset)."""
    return located_by(lambda params: None if params.get("dataset") else
                      next((params[n] for n in names if params.get(n)), None))


def _scores_options(help: str) -> Callable:
    """--dataset, --dataset-option, --scores (one file) and how it is read (--system-column, ...)."""
    def decorate(command: Callable) -> Callable:
        command = reading_options(aggregation=False)(command)
        command = option("scores", multiple=False, metavar="PATH", type=click.Path(dir_okay=False), help=help)(command)
        return options("dataset", "dataset_option")(command)
    return decorate


def _votes_options(command: Callable) -> Callable:
    decorators = [
        declare("realsumm", dict(type=click.Path(file_okay=False),
                                 help="REALSumm's human_annotations folder (SCU list, MTurk files,"
                                      " selected_documents.md).")),
        declare("scus", dict(type=click.Path(dir_okay=False), help="An SCU list (REALSumm or document,scu,text).")),
        declare("votes", dict(multiple=True, type=click.Path(dir_okay=False),
                              help="A votes file (MTurk results or document,system,scu,vote[,worker]); repeatable.")),
        declare("documents", dict(type=click.Path(dir_okay=False),
                                  help="REALSumm-style selected_documents.md mapping cnndm<line> ids to document"
                                       " numbers.")),
        declare("worker_filter", dict(type=click.Choice(WORKER_FILTERS), default=defaults.WORKER_FILTER,
                                      show_default=True, help="Drop each document's noisiest worker (needs worker"
                                                              " ids).")),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _annotations(realsumm, scus, votes, documents) -> PyramidAnnotations:
    if (realsumm is None) == (scus is None):
        raise ParameterError("exactly one of `--realsumm` and `--scus` must be given; got "
                             + ("both." if realsumm else "neither."))
    if realsumm is not None:
        if votes or documents:
            raise ParameterError("`--votes` and `--documents` must not be given with `--realsumm`; got them both.")
        return read_realsumm_annotations(realsumm)
    if not votes:
        raise ParameterError("`--votes` must name at least one votes file with `--scus`; got none.")
    mapping = read_selected_documents(documents) if documents else None
    scu_list = read_scu_list(scus, documents=mapping)
    return PyramidAnnotations.concat([read_votes(v, scus=scu_list, documents=mapping) for v in votes])


def _scoreset(dataset, dataset_option, scores, reading: Reading) -> ScoreSet:
    if (dataset is None) == (scores is None):
        raise ParameterError("exactly one of `--dataset` and `--scores` must be given; got "
                             + ("both." if dataset else "neither."))
    if dataset is not None:
        if reading.given():
            raise ParameterError(f"`{next(iter(reading.given()))}` must come with `--scores`; got it with --dataset.")
        return load_dataset(dataset, **parse_dataset_options(dataset_option))
    return read_files((scores,), reading)[0]


def _render(result, frame: pd.DataFrame, fmt: str, lines: list[str], output: str | None = None) -> str:
    """``result`` in ``fmt``; the terminal form is ``lines``, the frame as plain text and, under
    ``signature:``, the signature (broken between its fields), at the output's width."""
    def text(result):
        body = [frame.to_string(index=False, float_format=lambda v: f"{v:.4f}")] if len(frame) else []
        return [Text("\n".join(lines + body + ["signature:"])), SignatureLines(result.signature, label="")]

    return render_text(result, fmt, terminal=text, frame=frame, width=output_width(output))


@human.command()
@_votes_options
@option("ties", type=click.Choice(tuple(TIES)), default=defaults.LITEPYRAMID_TIES, show_default=True,
        help="Value of an SCU whose votes tie.")
@declare("compare_dataset", dict(help="A packaged dataset whose human scores the rebuilt ones are compared with."))
@declare("compare_scorer", dict(default="litepyramid.recall", show_default=True,
                                help="The compared dataset's scorer."))
@option("write_scores", help="Write the LitePyramid scores (CSV, TSV, JSONL or Parquet by extension).")
@output_options
def pyramid(realsumm, scus, votes, documents, worker_filter, ties, compare_dataset, compare_scorer, write_scores,
            format, output):
    """LitePyramid recall of every summary from present / absent votes."""
    ann = _annotations(realsumm, scus, votes, documents)
    result = litepyramid(ann, worker_filter=worker_filter, ties=ties)
    n, m = result.scoreset.shape
    lines = [f"LitePyramid: {len(result.summaries)} summaries, {n} systems x {m} documents;"
             f" worker filter {result.worker_filter}, ties {result.ties}"]
    frame = result.summaries
    if compare_dataset:
        match = pyramid_match(result, load_dataset(compare_dataset), compare_scorer)
        missing = ", ".join(match.not_in_reference) or "none"
        lines.append(f"match with {compare_dataset} {compare_scorer}: {match.n_matched} of {match.n_compared}"
                     f" cells ({match.rate:.2%}); not in {compare_dataset}: {missing}")
    if write_scores:
        write_score_file(result.scoreset, write_scores)
        lines.append(f"wrote {write_scores}")
    system_means = frame.groupby("system", as_index=False)["score"].mean() if format == "table" else frame
    emit(_render(result, system_means, format, lines, output), output)


@human.command("agreement")
@_located_by("scores")
@_votes_options
@_scores_options("A score file with an annotator column.")
@option("scorer")
@option("system", help="Only these systems (repeatable).")
@option("level", type=click.Choice(LEVELS), default=None, show_default=False,
        help="Level of measurement (default: nominal for votes, interval for scores).")
@declare("by", dict(type=click.Choice(PYRAMID_GROUPS), default=defaults.AGREEMENT_BY, show_default=True,
                    help="Also one alpha per document, system or summary, and their mean."))
@output_options
def agreement_(realsumm, scus, votes, documents, worker_filter, dataset, dataset_option, scores, reading, scorer,
               system, level, by, format, output):
    """Krippendorff's alpha of pyramid votes or of several annotators' scores."""
    if realsumm is not None or scus is not None:
        source = _annotations(realsumm, scus, votes, documents)
        if system:
            source = source.subset(systems=system)
        result = agreement(source, level=level, by=by, worker_filter=worker_filter)
    else:
        source = _scoreset(dataset, dataset_option, scores, reading)
        if system:
            source = source.subset(systems=system)
        result = agreement(source, scorer, level=level, by=by)
    lines = [f"Krippendorff's alpha ({result.level}): {result.alpha:.4f} over {result.n_units} units"]
    if result.alpha_before_filter is not None:
        lines.append(f"before the worker filter: {result.alpha_before_filter:.4f}")
    if result.mean_alpha is not None:
        lines.append(f"mean over {result.n_used} {by} groups: {result.mean_alpha:.4f} ({result.n_skipped} undefined)")
    frame = result.groups if format != "table" else result.groups.head(0)
    emit(_render(result, frame, format, lines, output), output)


@human.command("normalize")
@_located_by("scores")
@option("judgments", help="Long judgments file: system,input,annotator,score[,criterion].")
@_scores_options("A score file with an annotator column.")
@option("scorer")
@option("method", type=click.Choice(METHODS), default=defaults.NORMALIZATION,
        help="How each annotator's scores are normalised.")
@option("aggregation", type=click.Choice(AGGREGATIONS), default=defaults.HUMAN_AGGREGATION,
        help="How the normalised scores of several annotators per cell become one score.")
@declare("name", dict(help="Name of the new scorer."))
@option("write_scores", help="Write the new scores (CSV, TSV, JSONL or Parquet by extension).")
@output_options
def normalize_(judgments, dataset, dataset_option, scores, reading, scorer, method, aggregation, name, write_scores,
               format, output):
    """Per-annotator z-scores, then mean / median / majority per cell."""
    if judgments is not None:
        if dataset or scores:
            raise ParameterError("`--judgments` must not be given with `--dataset` or `--scores`; got both.")
        result = normalize(read_judgments(judgments), method=method, aggregation=aggregation, name=name)
    else:
        result = normalize(_scoreset(dataset, dataset_option, scores, reading), scorer, method=method,
                           aggregation=aggregation, name=name)
    lines = [f"{', '.join(result.scorers)}: {result.method} normalization, {result.aggregation} aggregation"]
    if write_scores:
        write_score_file(result.scoreset, write_scores)
        lines.append(f"wrote {write_scores}")
    emit(_render(result, result.details, format, lines, output), output)


@human.command()
@declare("ratings", dict(required=True, type=click.Path(dir_okay=False),
                         help="An MQM ratings file (TSV: system, doc, seg_id, rater, source, target, category,"
                              " severity; gzipped or not)."))
@option("write_scores", help="Write mqm and every rater's own scores mqm.<rater> (CSV, TSV, JSONL or Parquet by"
                             " extension).")
@output_options
def raters(ratings, write_scores, format, output):
    """Per rater of MQM ratings: cells rated, mean score, errors per cell, attention checks found."""
    from ..data.mqm_ratings import read_mqm_ratings
    from ..human import mqm_raters

    read = read_mqm_ratings(ratings, per_rater=True)
    result = mqm_raters(read)
    lines = [f"{len(result.raters)} raters over {result.n_cells} cells ({result.raters_per_cell:.2f} raters per"
             f" cell); attention checks: {read.counts['attention_rows']} rows"]
    if write_scores:
        write_score_file(read.scores, write_scores)
        lines.append(f"wrote {write_scores} ({', '.join(read.scores.scorers)})")
    emit(_render(result, result.raters, format, lines, output), output)


@human.command()
@option("judgments", required=True,
        help="Coverage judgments: system,document,unit,coverage (all/most/some/hardly any/none or 0-1).")
@option("threshold", help="Recall at this threshold instead of weighted retention.")
@option("write_scores", help="Write the per-summary scores (CSV, TSV, JSONL or Parquet by extension).")
@output_options
def retention(judgments, threshold, write_scores, format, output):
    """Weighted retention with MIN / MAX / MAJORITY / AVG bounds and the rankings they allow."""
    result = weighted_retention(read_coverage(judgments), threshold=threshold)
    lines = [f"{'weighted retention' if threshold is None else f'recall at {threshold:g}'};"
             f" {result.n_repeated} units judged more than once; rankings consistent with the bounds:"
             f" {result.n_rankings}"]
    if write_scores:
        write_score_file(result.scoreset, write_scores)
        lines.append(f"wrote {write_scores}")
    body = result.system_scores
    if format == "table":
        groups = result.groups_frame()
        lines.append("performance groups (row vs column: + above, - below, ~ overlap):")
        lines.append(groups.to_string())
    emit(_render(result, body, format, lines, output), output)


@human.command()
@_located_by("scores")
@_scores_options("A score file with metric scores.")
@option("metric", required=True, help="A metric describing documents (repeatable).")
@declare("n", dict(type=int, required=True, help="Documents to choose."))
@declare("mean_bins", dict(type=int, default=defaults.SAMPLE_MEAN_BINS, show_default=True,
                           help="Bins of the system mean in the stratified sample."))
@declare("std_bins", dict(type=int, default=defaults.SAMPLE_STD_BINS, show_default=True,
                          help="Bins of the system standard deviation in the stratified sample."))
@option("seed", help="Seed of the sampling.")
@output_options
def sample(dataset, dataset_option, scores, reading, metric, n, mean_bins, std_bins, seed, format, output):
    """Choose documents to annotate, spread over the metrics' mean and spread (REALSumm Alg. 1)."""
    ds = _scoreset(dataset, dataset_option, scores, reading)
    result = sample_documents(ds, list(metric), n, mean_bins=mean_bins, std_bins=std_bins, rng=seed)
    lines = [f"{len(result.documents)} of {len(result.table)} documents chosen ({result.n_excluded} without scores)"]
    frame = result.table[result.table["selected"]] if format == "table" else result.table
    emit(_render(result, frame, format, lines, output), output)

DEFAULT_METRIC = "rouge"
DEFAULT_MEASURE = "rouge-2.recall"
"""The measure of `human jackknife` / `human cross` unless ``--measure`` (ROUGE-2 recall, as DUC reported)."""


def _texts_options(command):
    decorators = [
        option("texts"),
        declare("n_documents", dict(type=int, help="Only the first N documents of the file.")),
        option("metric", multiple=False, default=DEFAULT_METRIC, show_default=True,
               help="The metric (a name of metaeval.metrics.METRICS)."),
        option("metric_option", help="An option of the metric, e.g. rouge.stem=true (repeatable)."),
        option("measure", default=DEFAULT_MEASURE, show_default=True,
               help="The metric's score used, e.g. rouge-2.recall, rouge-1.f1."),
    ]
    for decorator in reversed(decorators):
        command = decorator(command)
    return command


def _scorer(metric, metric_option):
    from ..metrics.registry import get_scorer

    return get_scorer(metric, **parse_metric_options((metric,), metric_option)[metric])


def _texts(texts, n_documents):
    return read_summary_texts(texts, n_documents=n_documents)


def _signed_texts(result, texts, n_documents):
    """``result`` with the texts file it was computed from in its signature (the library sees only the texts)."""
    from dataclasses import replace
    from pathlib import Path

    return replace(result, signature=result.signature.with_fields(texts=Path(texts).name, n_documents=n_documents))


@human.command("jackknife")
@_located_by("texts")
@_texts_options
@output_options
def jackknife(texts, n_documents, metric, metric_option, measure, format, output):
    """Jackknifed scores of systems and of each human reference (Lin 2004)."""
    if texts is None:
        raise click.UsageError("Missing option '--texts'.")
    candidates, references = _texts(texts, n_documents)
    result = jackknife_scores(candidates, references, scorer=_scorer(metric, metric_option), measure=measure)
    result = _signed_texts(result, texts, n_documents)
    n_docs, m = result.scoreset.shape[1], result.n_references
    lines = [f"jackknifed {measure}: {len(candidates)} systems and {m} human references, each scored against"
             f" {m - 1} references, {n_docs} documents",
             f"{result.n_systems_below_humans} of {len(candidates)} systems score below every human"]
    emit(_render(result, result.peers, format, lines, output), output)


@human.command("cross")
@_located_by("texts", "judgments")
@_texts_options
@option("judgments",
        help="Instead of --texts: judged questions, columns document,summary,questions,label (CSV/TSV/...).")
@declare("humans_only", dict(is_flag=True, help="With --texts: leave the system summaries out."))
@output_options
def cross(texts, n_documents, metric, metric_option, measure, judgments, humans_only, format, output):
    """Cross-comprehension of human summaries (Kolluru & Gotoh 2005)."""
    if (texts is None) == (judgments is None):
        raise click.UsageError("exactly one of '--texts' and '--judgments' must be given.")
    if judgments is not None:
        result = cross_comprehension_labels(read_cross_judgments(judgments))
        o = result.overall
        lines = [f"cross-comprehension: {result.n_judgments} judged questions; overall relevant {o['relevant']:.1%},"
                 f" relevant or partial {o['relevant_or_partial']:.1%}, found {o['found']:.1%}"]
        emit(_render(result, result.to_frame(), format, lines, output), output)
        return
    candidates, references = _texts(texts, n_documents)
    scorer = _scorer(metric, metric_option)
    result = cross_comprehension(references, scorer=scorer, measure=measure,
                                 candidates=None if humans_only else candidates)
    result = _signed_texts(result, texts, n_documents)
    m = len(result.matrix)
    lines = [f"cross-comprehension under {measure}: {m} human summaries per document, {len(result.documents)}"
             f" documents; human level (mean over ordered pairs of authors) {result.human_level:.4f}"]
    if format == "table":
        lines.append("row: summary author, column: reference author (mean over documents)")
        lines.append(result.matrix.to_string(float_format=lambda v: f"{v:.3f}", na_rep="-"))
    emit(_render(result, result.peers, format, lines, output), output)

