"""`metaeval nuggets counts|match|realsumm`: nugget F(beta) of answers and summaries (Lin & Demner-Fushman 2005)."""
from __future__ import annotations

from collections.abc import Callable

import click
from rich.table import Table

from .. import defaults
from ..analyses.nuggets import litepyramid_nuggets, match_nuggets, nugget_scores, realsumm_nugget_tables
from ..metrics.nugget_match import MATCH_MODES
from .analysis_output import footer, number, output_options, render

MATCHERS = ("auto", "crowd")
_SHOWN_ROWS = 20


@click.group()
def nuggets() -> None:
    """Nugget F(beta) of answers and summaries (Lin & Demner-Fushman 2005)."""


def _f_options(command: Callable) -> Callable:
    command = click.option("--allowance", type=float, default=defaults.NUGGET_ALLOWANCE, show_default=True,
                           help="Characters allowed per matched (vital or okay) nugget.")(command)
    return click.option("--beta", type=float, default=defaults.NUGGET_BETA, show_default=True,
                        help="Weight of recall: 3 (TREC 2004) or 5 (TREC 2003).")(command)


def _matcher_options(command: Callable) -> Callable:
    options = [
        click.option("--match", type=click.Choice(MATCH_MODES), default=defaults.NUGGET_MATCH, show_default=True,
                     help="A nugget counts 1 above the threshold, or counts its share of terms found."),
        click.option("--threshold", type=float, default=defaults.NUGGET_THRESHOLD, show_default=True,
                     help="Share of a nugget's content terms that must occur in the text."),
        click.option("--stem/--no-stem", default=True, show_default=True,
                     help="Porter-stem terms as ROUGE-1.5.5 -m."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@nuggets.command()
@click.argument("counts", type=click.Path(dir_okay=False))
@_f_options
@output_options
def counts(counts, beta, allowance, fmt, output):
    """F(beta) from a table of vital_matched, okay_matched, vital_total and length."""
    result = nugget_scores(counts, beta=beta, allowance=allowance)
    render(result, fmt, result.to_frame(), _tables, output)


@nuggets.command()
@click.option("--nuggets", "key", required=True, type=click.Path(dir_okay=False),
              help="The answer key: input, nugget[, importance vital|okay].")
@click.option("--texts", required=True, type=click.Path(dir_okay=False), help="The responses: system, input, text.")
@_matcher_options
@_f_options
@output_options
def match(key, texts, match, threshold, stem, beta, allowance, fmt, output):
    """F(beta) with nuggets matched automatically by term overlap (POURPRE style)."""
    result = match_nuggets(key, texts, beta=beta, allowance=allowance, match=match, threshold=threshold, stem=stem)
    render(result, fmt, result.to_frame(), _tables, output)


@nuggets.command()
@click.argument("annotations", type=click.Path(file_okay=False))
@click.option("--matcher", type=click.Choice(MATCHERS), default="auto", show_default=True,
              help="auto: term overlap of each SCU with the summary; crowd: the MTurk majority votes.")
@click.option("--summaries", type=click.Path(dir_okay=False),
              help="realsumm_scores.jsonl (the summaries; --matcher auto).")
@_matcher_options
@_f_options
@output_options
def realsumm(annotations, matcher, summaries, match, threshold, stem, beta, allowance, fmt, output):
    """REALSumm's SCUs as vital nuggets: F(beta) of every summary."""
    from ..errors import ParameterError

    if matcher == "auto":
        if summaries is None:
            raise ParameterError("`--summaries` must name realsumm_scores.jsonl with `--matcher auto`; got none.")
        key, texts = realsumm_nugget_tables(annotations, summaries)
        result = match_nuggets(key, texts, beta=beta, allowance=allowance, match=match, threshold=threshold,
                               stem=stem)
    else:
        from ..human import litepyramid, read_realsumm_annotations

        votes = read_realsumm_annotations(annotations)
        result = litepyramid_nuggets(litepyramid(votes), votes.texts, beta=beta, allowance=allowance)
    render(result, fmt, result.to_frame(), _tables, output)


def _tables(result):
    frame = result.table
    labelled = frame["system"].notna().all()
    if len(frame) <= _SHOWN_ROWS or not labelled:
        table = Table(title=f"Nugget F({result.beta:g}) of each response", title_justify="left")
        columns = ("system", "input", "vital_matched", "okay_matched", "vital_total", "length", "recall",
                   "precision", "nugget_f")
        for column in columns:
            table.add_column(column, justify="left" if column in ("system", "input") else "right")
        for row in frame.head(None if not labelled else _SHOWN_ROWS).itertuples(index=False):
            table.add_row(str(row.system or ""), str(row.input or ""), f"{row.vital_matched:g}",
                          f"{row.okay_matched:g}", f"{row.vital_total:g}", f"{row.length:g}", number(row.recall),
                          number(row.precision), number(row.nugget_f))
    else:
        grouped = frame.groupby("system", sort=True)
        table = Table(title=f"Nugget F({result.beta:g}) per system (mean over its responses; --format csv for all "
                            "responses)", title_justify="left")
        for column in ("system", "responses", "recall", "precision", "nugget_f"):
            table.add_column(column, justify="left" if column == "system" else "right")
        for system, part in grouped:
            table.add_row(system, str(len(part)), number(part["recall"].mean()), number(part["precision"].mean()),
                          number(part["nugget_f"].mean()))
    notes = [f"{result.n_responses} responses, mean nugget F {result.mean:.4f}"]
    if result.n_unmatchable:
        notes.append(f"{result.n_unmatchable} nuggets without a content term left out of the answer key")
    return [table, *footer(result, notes)]
