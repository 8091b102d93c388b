"""`metaeval nuggets counts|match|realsumm`: nugget F(beta) of answers and summaries (Lin & Demner-Fushman 2005)."""
from __future__ import annotations

from collections.abc import Callable

import click
from .. import defaults
from ..analyses.nuggets import litepyramid_nuggets, match_nuggets, nugget_scores, realsumm_nugget_tables
from ..metrics.nugget_match import MATCH_MODES
from .analysis_output import footer, frame_table, render
from .common import declare, group, option, output_options

MATCHERS = ("auto", "crowd")
_SHOWN_ROWS = 20


@group()
def nuggets() -> None:
    """Nugget F(beta) of answers and summaries.

    Lin & Demner-Fushman (2005): recall of vital nuggets, precision from an allowance of characters.
    """


def _f_options(command: Callable) -> Callable:
    command = declare("allowance", dict(type=float, default=defaults.NUGGET_ALLOWANCE, show_default=True,
                                        help="Characters allowed per matched (vital or okay) nugget."))(command)
    return declare("beta", dict(type=float, default=defaults.NUGGET_BETA, show_default=True,
                                help="Weight of recall: 3 (TREC 2004) or 5 (TREC 2003)."))(command)


def _matcher_options(command: Callable) -> Callable:
    options = [
        declare("match", dict(type=click.Choice(MATCH_MODES), default=defaults.NUGGET_MATCH, show_default=True,
                              help="A nugget counts 1 above the threshold, or counts its share of terms found.")),
        option("threshold", default=defaults.NUGGET_THRESHOLD, show_default=True,
               help="Share of a nugget's content terms that must occur in the text."),
        declare("stem", dict(flag="--stem/--no-stem", default=True, show_default=True,
                             help="Porter-stem terms as ROUGE-1.5.5 -m.")),
    ]
    for decorator in reversed(options):
        command = decorator(command)
    return command


@nuggets.command()
@click.argument("counts", type=click.Path(dir_okay=False))
@_f_options
@output_options
def counts(counts, beta, allowance, format, output):
    """F(beta) from a table of vital_matched, okay_matched, vital_total and length."""
    result = nugget_scores(counts, beta=beta, allowance=allowance)
    render(result, format, result.to_frame(), _tables, output)


@nuggets.command()
@declare("nuggets", dict(required=True, type=click.Path(dir_okay=False),
                         help="The answer key: input, nugget[, importance vital|okay]."))
@option("texts", required=True, help="The responses: system, input, text.")
@_matcher_options
@_f_options
@output_options
def match(nuggets, texts, match, threshold, stem, beta, allowance, format, output):
    """F(beta) with nuggets matched automatically by term overlap (POURPRE style)."""
    result = match_nuggets(nuggets, texts, beta=beta, allowance=allowance, match=match, threshold=threshold,
                           stem=stem)
    render(result, format, result.to_frame(), _tables, output)


@nuggets.command()
@click.argument("annotations", type=click.Path(file_okay=False))
@declare("matcher", dict(type=click.Choice(MATCHERS), default="auto", show_default=True,
                         help="auto: term overlap of each SCU with the summary; crowd: the MTurk majority votes."))
@declare("summaries", dict(type=click.Path(dir_okay=False),
                           help="realsumm_scores.jsonl (the summaries; --matcher auto)."))
@_matcher_options
@_f_options
@output_options
def realsumm(annotations, matcher, summaries, match, threshold, stem, beta, allowance, format, output):
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
    render(result, format, result.to_frame(), _tables, output)


def _tables(result):
    """The responses (or, with many, the mean per system) as a table that splits into column blocks rather
    than cut a name at the terminal's width."""
    frame = result.table
    labelled = frame["system"].notna().all()
    if len(frame) <= _SHOWN_ROWS or not labelled:
        shown = frame.head(None if not labelled else _SHOWN_ROWS).assign(
            system=lambda f: f["system"].fillna("").astype(str), input=lambda f: f["input"].fillna("").astype(str))
        for column in ("vital_matched", "okay_matched", "vital_total", "length"):  # counts print as counts
            values = shown[column]
            if values.notna().all() and (values == values.round()).all():
                shown[column] = values.astype("int64")
        table = frame_table(shown, title=f"Nugget F({result.beta:g}) of each response",
                            columns=["system", "input", "vital_matched", "okay_matched", "vital_total", "length",
                                     "recall", "precision", "nugget_f"])
    else:
        grouped = frame.groupby("system", sort=True)
        means = grouped[["recall", "precision", "nugget_f"]].mean()
        means.insert(0, "responses", grouped.size())
        table = frame_table(means.reset_index(), title=f"Nugget F({result.beta:g}) per system (mean over its"
                                                       " responses; --format csv for all responses)")
    notes = [f"{result.n_responses} responses, mean nugget F {result.mean:.4f}"]
    if result.n_unmatchable:
        notes.append(f"{result.n_unmatchable} nuggets without a content term left out of the answer key")
    return [table, *footer(result, notes)]
