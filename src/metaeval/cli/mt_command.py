"""`metaeval mt`: WMT-style meta-evaluation over one or several language pairs (docs/mt.md)."""
from __future__ import annotations

import os
from pathlib import Path

import click

from .. import defaults
from ..vocabulary import MT_HUMAN_TIES, MT_PROTOCOLS, MT_SIGNIFICANCE
from ..scoring.corpus import CORPUS_METRICS
from ..errors import ParameterError
from .common import (
    declare,
    emit,
    option as shared,
    output_options,
    output_width,
    reading_options,
    resamples_option,
    seed_option,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import Reading, Source, corpus_statistics_for, located_by, scores_argument


def _language_pairs(scores: tuple[str, ...], human: str | None, reading: Reading,
                    n_resamples: int) -> tuple[dict, str]:
    """``LP=PATH`` (or a bare ``PATH``, named by its file stem), repeatable per language pair -> ({lp:
    ScoreSet}, human): the files of one language pair joined on (system, input) and every reading option
    (--input-column, --where, ... each for every file or FILE=VALUE for one) applied, as for `correlate`.
    An argument is ``LP=PATH`` when PATH exists and the whole argument does not (as ``--scores NAME=PATH``
    elsewhere); otherwise it is a path."""
    from .source import load_source

    files: dict[str, list[str]] = {}
    for item in scores:
        lp, path = scores_argument(item)
        if lp is None:
            lp, sep, rest = item.partition("=")
            if sep and os.path.exists(item) or not sep:
                lp, path = Path(item).stem, item
            else:  # neither exists: LP=PATH, the missing PATH is reported
                path = rest
        if not lp or not path:
            raise ParameterError(f"`--scores` must look like LP=PATH or PATH; got {item!r}.")
        if path in files.get(lp, ()):
            raise ParameterError(f"`--scores` must give a file once per language pair; got {path!r} twice for {lp!r}.")
        files.setdefault(lp, []).append(path)
    every = tuple(path for paths in files.values() for path in paths)
    data = {}
    for lp, paths in files.items():
        data[lp], found = load_source(Source(scores=tuple(paths), human=human, reading=reading), other_files=every,
                                      n_resamples=n_resamples)
        if human is None:  # the first language pair's human (its --human-column or its only human) for all
            human = found
    return data, human


def _mt_metrics_eval(root: str, language_pairs: tuple[str, ...]) -> dict:
    from ..data.wmt import read_mt_metrics_eval

    if not language_pairs:
        raise ParameterError("`--language-pair` must be given at least once with `--mt-metrics-eval`; got none.")
    return {lp: read_mt_metrics_eval(root, lp, level="seg") for lp in dict.fromkeys(language_pairs)}


def _chosen(data: dict, human: str | None, metrics: tuple[str, ...], exclude_systems: tuple[str, ...]) -> str:
    """Check the human, the metrics and the excluded systems against every language pair, naming the flags
    (``mt_evaluate``'s own messages name its parameters), and return the human."""
    from ..data.scoreset import _suggestion

    first = next(iter(data.values()))
    if human is None:
        if len(first.humans) != 1:
            raise ParameterError(
                "`--human` must name the human scorer; got none, and the data marks "
                + (f"{len(first.humans)} scorers as human ({', '.join(map(repr, first.humans))})."
                   if first.humans else "no scorer as human."))
        human = first.humans[0]
    for ds in data.values():
        ds.require(human, param="--human")
        for metric in metrics:
            ds.require(metric, param="--metric")
    known = tuple(dict.fromkeys(s for ds in data.values() for s in ds.systems))
    for name in exclude_systems:
        if name not in known:
            raise ParameterError(f"`--exclude-system` must name a system of the scores; got {name!r}"
                                 f"{_suggestion(name, known)}.")
    return human


def _check_memory(data: dict, n_resamples: int) -> None:
    from .._validation import check_resample_memory

    for ds in data.values():
        check_resample_memory(n_resamples, *ds.shape, param="--n-resamples")


def _per_language_pair(option: str, items: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for item in items:
        lp, sep, path = item.partition("=")
        if not sep or not lp or not path or lp in out:
            raise ParameterError(f"`{option}` must look like LP=PATH, once per language pair; got {item!r}.")
        out[lp] = path
    return out


def _corpus_statistics(data: dict, metrics: tuple[str, ...], candidate_files, reference_files) -> dict:
    """{metric: {lp: CorpusScores}} for ``mt_evaluate`` from the texts of every language pair."""
    candidates = _per_language_pair("--candidates", candidate_files)
    references = _per_language_pair("--references", reference_files)
    if not metrics:
        return corpus_statistics_for(next(iter(data.values())), metrics, candidates, references)  # the misuse error
    for option, given in (("--candidates", candidates), ("--references", references)):
        missing = [lp for lp in data if lp not in given]
        if missing:
            raise ParameterError(f"`{option}` must give a file for every language pair with --corpus-metric; got"
                                 f" none for {', '.join(map(repr, missing))}.")
    per_lp = {lp: corpus_statistics_for(ds, metrics, candidates[lp], references[lp], where=f"language pair {lp!r}")
              for lp, ds in data.items()}
    return {metric: {lp: per_lp[lp][metric] for lp in data} for metric in dict.fromkeys(metrics)}


def _origin(params: dict) -> str:
    """Where the data came from, named in a data error (too few systems, an unknown scorer)."""
    scores = params["scores"]
    return ", ".join(item.partition("=")[2] or item for item in scores) if scores else str(params["mt_metrics_eval"])


@click.command()
@shared("scores", metavar="LP=PATH",
        help="A score file of one language pair (repeatable; several files of one language pair are joined on"
             " (system, input)): CSV, TSV, JSONL or Parquet. LP=PATH when PATH exists and LP=PATH does not;"
             " a bare PATH is named by its file stem.")
@declare("mt_metrics_eval", dict(type=click.Path(file_okay=False),
                                 help="An mt-metrics-eval test-set directory (human-scores/, metric-scores/)."))
@declare("language_pair", dict(multiple=True,
                               help="With --mt-metrics-eval: a language pair to read (repeatable), e.g. en-de."))
@shared("human", help="The human scorer (default: the only human scorer; required when there are several).")
@shared("metric", help="A metric (repeatable; default: every non-human scorer).")
@declare("protocol", dict(type=click.Choice(MT_PROTOCOLS), default=defaults.MT_PROTOCOL, show_default=True,
                          help="Preset of tasks, averaging, test, human-tie rule and p-values: WMT23 or WMT24 as"
                               " mt-metrics-eval computes them, or the plain mean of the task statistics"
                               " (docs/mt.md)."))
@declare("task", dict(multiple=True, metavar="LEVEL/STATISTIC", help="A task (repeatable; default: the protocol's)."))
@declare("significance", dict(type=click.Choice(MT_SIGNIFICANCE), default=None,
                              help="Test between metrics (default: the protocol's, permutation)."))
@declare("human_ties", dict(type=click.Choice(MT_HUMAN_TIES), default=None,
                            help="System accuracy: count the system pairs the human ties or skip them (default: the"
                                 " protocol's)."))
@shared("exclude_system", help="Leave this system out in every language pair (repeatable), e.g. a human reference.")
@shared("alpha", help="Significance level of the clusters.")
@declare("recalibrate", dict(is_flag=True, default=defaults.MT_RECALIBRATE,
                             help="acc23 / tau23: re-optimise the tie threshold inside every resample."))
@declare("darr_threshold", dict(type=float, default=defaults.MT_DARR_THRESHOLD, show_default=True,
                                help="DARR: the least human score difference of a segment pair."))
@shared("corpus_metric", type=click.Choice(CORPUS_METRICS),
        help="Score systems with this metric's corpus score (summed sufficient statistics) instead of the mean of"
             " its segment scores (repeatable; needs --candidates and --references).")
@shared("candidates", multiple=True, metavar="LP=PATH",
        help="With --corpus-metric: the system outputs of one language pair (repeatable), as for `metaeval score`.")
@shared("references", multiple=True, metavar="LP=PATH",
        help="With --corpus-metric: the references of one language pair (repeatable).")
@reading_options()
@resamples_option
@seed_option
@tie_tolerance_option
@progress_option
@output_options
@located_by(_origin)
def mt(scores, mt_metrics_eval, language_pair, human, metric, protocol, task, significance, human_ties,
       exclude_system, alpha, recalibrate, darr_threshold, corpus_metric, candidates, references, reading, n_resamples,
       seed, format, output):
    """WMT-style tasks per language pair and pooled, ranked into significance clusters."""
    from ..correlation.mt import POOLED, mt_evaluate
    from ..report.render import frame_table, render_text, signature_footer

    mtme_root, language_pairs, metrics, tasks, exclude_systems = mt_metrics_eval, language_pair, metric, task, exclude_system
    corpus_metrics, candidate_files, reference_files, fmt = corpus_metric, candidates, references, format

    if bool(scores) == bool(mtme_root):
        raise ParameterError("exactly one of `--scores` and `--mt-metrics-eval` must be given; got "
                             + ("both." if scores else "neither."))
    if mtme_root and reading.given():
        raise ParameterError(f"`{next(iter(reading.given()))}` must come with `--scores`; got it with"
                             " --mt-metrics-eval (its files have a fixed layout).")
    if scores:
        data, human = _language_pairs(scores, human, reading, n_resamples)
    else:
        data = _mt_metrics_eval(mtme_root, language_pairs)
        _check_memory(data, n_resamples)
    human = _chosen(data, human, metrics, exclude_systems)
    corpus = _corpus_statistics(data, corpus_metrics, candidate_files, reference_files)
    tasks = tasks or defaults.MT_PRESETS[protocol]["tasks"]
    with progress_bar() as bar:
        result = mt_evaluate(data, list(metrics) or None, human, protocol=protocol, tasks=tasks,
                             significance=significance, human_ties=human_ties,
                             exclude_systems=exclude_systems, n_resamples=n_resamples, alpha=alpha,
                             recalibrate=recalibrate, darr_threshold=darr_threshold, rng=seed,
                             corpus_statistics=corpus or None,
                             progress=bar.task("tasks x language pairs", total=len(tasks) * len(data)))

    def terminal(res):  # the rankings; every task's p-values and ranks are in --format json / csv
        # the language pairs' rankings, then the pooled one with its own tasks (no column it lacks)
        frame = res.ranking_frame()
        tables = [frame_table(part.dropna(axis=1, how="all"), title=title)
                  for part, title in ((frame[frame["scope"] != POOLED], "language pairs"),
                                      (frame[frame["scope"] == POOLED], "pooled over the language pairs"))]
        return [*tables, *signature_footer(res, res.notes())]

    emit(render_text(result, fmt, terminal=terminal, width=output_width(output)), output)
