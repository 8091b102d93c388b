"""`metaeval mt [evaluate]`: WMT-style meta-evaluation over one or several language pairs (docs/mt.md); the
default command of the `metaeval mt` group (:mod:`.mt_group`)."""
from __future__ import annotations

import os
from pathlib import Path

import click

from .. import defaults
from ..vocabulary import CORPUS_METRICS, MT_HUMAN_TIES, MT_SEGMENTS, MT_SIGNIFICANCE
from ..errors import ParameterError
from .common import (
    declare,
    emit,
    option as shared,
    output_options,
    output_width,
    reading_options,
    resamples_option,
    say,
    seed_option,
    tie_tolerance_option,
)
from .progress import progress_bar, progress_option
from .source import Reading, Source, corpus_statistics_for, located_by, scores_argument


def _language_pairs(scores: tuple[str, ...], human: str | None, reading: Reading, n_resamples: int, *,
                    datasets: tuple[str, ...] = (), dataset_options: tuple[str, ...] = (),
                    golds: dict[str, str] | None = None, protocol=None) -> tuple[dict, str | None]:
    """``LP=PATH`` (or a bare ``PATH``, named by its file stem) and ``LP=DATASET`` (or a bare packaged dataset
    name, named by the name), repeatable per language pair -> ({lp: ScoreSet}, human): the dataset and the
    files of one language pair joined on (system, input) and every reading option (--input-column, --where,
    ... each for every file or FILE=VALUE for one) applied, as for `correlate`. A dataset with a
    ``language_pair`` option (``wmt19-da-sys``) is read for its language pair unless --dataset-option sets it.
    An argument of --scores is ``LP=PATH`` when PATH exists and the whole argument does not (as ``--scores
    NAME=PATH`` elsewhere); otherwise it is a path."""
    from ..data.datasets import dataset_info
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
    packaged: dict[str, str] = {}
    for item in datasets:
        lp, sep, name = item.partition("=")
        if not sep:
            lp, name = item, item
        if not lp or not name or lp in packaged:
            raise ParameterError(f"`--dataset` must look like LP=NAME or NAME, once per language pair; got {item!r}.")
        packaged[lp] = name
    every = tuple(path for paths in files.values() for path in paths)
    golds = golds or {}

    def protocol_gold(lp):
        return None if protocol is None else protocol.gold_for(lp)

    data = {}
    for lp in dict.fromkeys([*packaged, *files]):
        name = packaged.get(lp)
        options = dataset_options
        if name is not None and not any(o.startswith("language_pair=") for o in options):
            if "language_pair" in (dataset_info(name).get("options") or {}):
                options = (*options, f"language_pair={lp}")
        gold = golds.get(lp) or human or protocol_gold(lp)
        source = Source(dataset=name, dataset_option=options if name is not None else (),
                        scores=tuple(files.get(lp, ())), human=None, reading=reading)
        data[lp], found = load_source(source, other_files=every, n_resamples=n_resamples,
                                      human_optional=gold is not None)
        if gold is not None:
            data[lp] = _with_gold(data[lp], lp, gold, None if golds.get(lp) or human else protocol)
        if human is None and lp not in golds and protocol_gold(lp) is None:
            human = found  # the first language pair's human (its --human-column or its only human) for all
    return data, human


def _with_gold(ds, lp: str, gold: str, protocol=None):
    """``ds`` with ``gold`` marked human; a gold it lacks is an error naming the language pair, and the protocol
    when the protocol chose it (``protocol`` None: the user named it with --human)."""
    if gold not in ds.scorers:
        shown = ds.scorers[:8]
        humans = ", ".join(map(repr, ds.humans)) or ("none; its scorers: " + ", ".join(map(repr, shown))
                                                     + (f" and {len(ds.scorers) - 8} more" if len(ds.scorers) > 8 else ""))
        chosen = "" if protocol is None else f" (the protocol {protocol.name!r} chose it)"
        from ..data.scoreset import _suggestion

        raise ParameterError(f"`--human`: the gold of language pair {lp!r} must be one of its scorers; got {gold!r}"
                             f"{chosen}{hint if (hint := _suggestion(gold, ds.scorers)).startswith(' (did you mean') else ''} (its human scorers: {humans}; name one with"
                             f" --human {lp}=NAME or --human NAME).")
    return ds if gold in ds.humans else ds.with_humans((*ds.humans, gold))


def _mt_metrics_eval(root: str, language_pairs: tuple[str, ...]) -> tuple[dict, dict]:
    """({lp: segment ScoreSet}, {lp: system ScoreSet}) of an mt-metrics-eval directory; the system scores of a
    language pair only when it has ``*.sys.score`` files."""
    from ..mt.readers import has_level, read_mt_metrics_eval

    if not language_pairs:
        raise ParameterError("`--language-pair` must be given at least once with `--mt-metrics-eval`; got none.")
    lps = tuple(dict.fromkeys(language_pairs))
    seg = {lp: read_mt_metrics_eval(root, lp, level="seg") for lp in lps}
    sys = {lp: read_mt_metrics_eval(root, lp, level="sys") for lp in lps if has_level(root, lp, "sys")}
    return seg, sys


FLAGS = {"human": "--human", "metrics": "--metric", "exclude_systems": "--exclude-system",
         "human_baselines": "--human-baseline", "n_resamples": "--n-resamples", "rater_waves": "--rater-waves",
         "aggregation": "--aggregation", "intervals": "--intervals"}
"""The flags :func:`metaeval.mt_evaluate`'s errors name (``params=``): the library validates, the CLI parses."""


def _golds(humans: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """``--human NAME`` (every language pair) and ``--human LP=NAME`` (one) -> (name or None, {lp: name})."""
    shared, per_lp = None, {}
    for item in humans:
        lp, sep, name = item.partition("=")
        if sep and lp and name:
            if lp in per_lp:
                raise ParameterError(f"`--human` must give one scorer per language pair; got {lp!r} twice.")
            per_lp[lp] = name
        elif not sep and shared is None:
            shared = item
        elif not sep:
            raise ParameterError(f"`--human` without LP= names the gold of every language pair and must be given once;"
                                 f" got {shared!r} and {item!r} (write LP=NAME for one language pair's gold).")
        else:
            raise ParameterError(f"`--human` must look like NAME (once) or LP=NAME; got {item!r}.")
    return shared, per_lp


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


def _verdict_table(result):
    """The terminal table of the verdicts: per scope, task and baseline, the metrics above, level, below - one row
    per (scope, task) when it fits the width, else one row per verdict with its list of metrics wrapped at the
    width (a table of many metrics never splits into column blocks; issue 41 item 4)."""
    import pandas as pd

    from ..report.render import FirstThatFits, frame_table

    frame = pd.DataFrame(result.baseline_verdicts(summary=True))
    if (frame["untested"] == "-").all():
        frame = frame.drop(columns="untested")
    one = len(result.human_baselines) == 1
    if one:  # named in the title
        frame = frame.drop(columns="baseline")
    frame = frame.rename(columns={"baseline_statistic": "baseline" if one else "value"})
    named = f"human baseline {result.human_baselines[0]}" if one else "each human baseline"
    title = f"metrics above / level with / below {named} (p < {result.alpha:g})"
    verdicts = [c for c in ("above", "level", "below", "untested") if c in frame.columns]
    kept = [c for c in frame.columns if c not in verdicts]
    long = pd.DataFrame([{**{c: row[c] for c in kept}, "verdict": v, "metrics": row[v]}
                         for _, row in frame.iterrows() for v in verdicts if row[v] != "-"])
    return FirstThatFits(frame_table(frame, title=title), frame_table(long, title=title, wrap=["metrics"]))


def _origin(params: dict) -> str:
    """Where the data came from, named in a data error (too few systems, an unknown scorer)."""
    given = (*params["scores"], *params["dataset"])
    return ", ".join(item.partition("=")[2] or item for item in given) if given else str(params["mt_metrics_eval"])


@click.command(name="evaluate")
@shared("scores", metavar="LP=PATH",
        help="A score file of one language pair (repeatable; several files of one language pair are joined on"
             " (system, input)): CSV, TSV, JSONL or Parquet. LP=PATH when PATH exists and LP=PATH does not;"
             " a bare PATH is named by its file stem.")
@shared("dataset", multiple=True, metavar="LP=NAME",
        help="A packaged dataset as (part of) a language pair (repeatable; joined with that pair's --scores),"
             " e.g. en-de=wmt20-mqm-ende; see `metaeval datasets list`.")
@shared("dataset_option", help="An option of the packaged datasets (repeatable).")
@declare("mt_metrics_eval", dict(type=click.Path(file_okay=False),
                                 help="An mt-metrics-eval test-set directory (human-scores/, metric-scores/)."))
@declare("language_pair", dict(multiple=True,
                               help="With --mt-metrics-eval: a language pair to read (repeatable), e.g. en-de."))
@shared("human", multiple=True, metavar="[LP=]NAME",
        help="The human scorer (the gold; default: the protocol's, else the only human scorer), or LP=NAME for"
             " one language pair (repeatable).")
@shared("metric", help="A metric (repeatable; default: every non-human scorer).")
@shared("human_baseline")
@shared("rater_waves")
@shared("protocol", default=defaults.MT_PROTOCOL, show_default=True,
        help="Tasks, averaging, test, human-tie rule, p-values and gold: wmt23, wmt24, wmt25 as mt-metrics-eval"
             " computes them, mean (the plain mean of the task statistics), or a TOML file (docs/mt.md).")
@declare("show_protocol", dict(metavar="NAME|FILE.toml", help="Print a protocol's tasks and weights and exit."))
@shared("task", multiple=True, metavar="LEVEL/STATISTIC", help="A task (repeatable; default: the protocol's).")
@declare("segments", dict(type=click.Choice(MT_SEGMENTS), default=defaults.MT_SEGMENTS, show_default=True,
                          help="common: every metric on the segments all metrics scored (as WMT; the tests need one"
                               " set); per-metric: each metric on its own (no tests between metrics)."))
@declare("significance", dict(type=click.Choice(MT_SIGNIFICANCE), default=None,
                              help="Test between metrics (default: the protocol's, permutation)."))
@declare("human_ties", dict(type=click.Choice(MT_HUMAN_TIES), default=None,
                            help="System accuracy: count the system pairs the human ties or skip them (default: the"
                                 " protocol's)."))
@shared("exclude_system", metavar="[LP=]SYSTEM",
        help="Leave this system out in every language pair, or LP=SYSTEM in language pair LP only (repeatable),"
             " e.g. a human reference.")
@shared("alpha", help="Significance level of the clusters (and 1 - alpha the level of the intervals).")
@declare("intervals", dict(is_flag=True, default=False,
                           help="Under the permutation test, also draw --n-resamples bootstrap resamples of the"
                                " segments and print each statistic's percentile interval (the bootstrap test"
                                " prints its own)."))
@shared("plot", help="Also draw the rankings (human baselines marked) to this .png or .svg file.")
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
def evaluate(scores, dataset, dataset_option, mt_metrics_eval, language_pair, human, metric, human_baseline, rater_waves,
       protocol, show_protocol, task, segments, significance, human_ties, exclude_system, alpha, intervals, plot,
       recalibrate,
       darr_threshold, corpus_metric, candidates, references, reading, n_resamples, seed, tie_tolerance, format,
       output):
    """WMT-style tasks per language pair and pooled, ranked into significance clusters."""
    from ..mt.checks import resolve_protocol
    from ..mt.evaluate import mt_evaluate
    from ..mt.protocol import load_protocol
    from ..mt.result import POOLED
    from ..report.render import frame_table, render_text, signature_footer

    mtme_root, language_pairs, metrics, tasks, exclude_systems = mt_metrics_eval, language_pair, metric, task, exclude_system
    corpus_metrics, candidate_files, reference_files, fmt = corpus_metric, candidates, references, format

    if show_protocol:
        say("\n".join(load_protocol(show_protocol).lines()))  # a file's description may hold control characters
        return
    protocol = resolve_protocol(load_protocol(protocol), tasks or None, significance, human_ties)
    if bool(scores or dataset) == bool(mtme_root):
        raise ParameterError("exactly one of `--scores` / `--dataset` and `--mt-metrics-eval` must be given; got "
                             + ("both." if mtme_root else "neither."))
    if mtme_root and reading.given():
        raise ParameterError(f"`{next(iter(reading.given()))}` must come with `--scores`; got it with"
                             " --mt-metrics-eval (its files have a fixed layout).")
    if mtme_root and reading.allow_unmatched:
        raise ParameterError("`--allow-unmatched` must come with `--scores`; got it with --mt-metrics-eval (every"
                             " file of a language pair has its one list of segments: nothing is joined).")
    if plot:
        from ..report.qarla_figure import check_figure_path

        check_figure_path(plot)
    human, golds = _golds(human)
    system_scores = None
    if scores or dataset:
        waves_first = rater_waves is not None  # the gold may be a wave: read the files' own human first
        data, found = _language_pairs(scores, None if waves_first else human, reading, n_resamples, datasets=dataset,
                                      dataset_options=dataset_option, golds={} if waves_first else golds,
                                      protocol=None if waves_first else protocol)
        human = human if waves_first else found
    else:
        data, system_scores = _mt_metrics_eval(mtme_root, language_pairs)
    gold = {**({lp: human for lp in data} if human else {}), **golds} if golds else human
    corpus = _corpus_statistics(data, corpus_metrics, candidate_files, reference_files)
    with progress_bar() as bar:
        result = mt_evaluate(data, list(metrics) or None, gold, protocol=protocol, exclude_systems=exclude_systems,
                             human_baselines=human_baseline, n_resamples=n_resamples, alpha=alpha,
                             recalibrate=recalibrate, darr_threshold=darr_threshold, segments=segments,
                             system_scores=system_scores, rng=seed, corpus_statistics=corpus or None,
                             tie_tolerance=tie_tolerance, rater_waves=rater_waves, params=FLAGS, intervals=intervals,
                             progress=bar.task("tasks x language pairs", total=len(protocol.tasks) * len(data)))
    if plot:
        from ..report.mt_figure import save_mt_figure

        save_mt_figure(result, plot)

    def terminal(res):  # the rankings; every task's p-values and ranks are in --format json / csv
        # the language pairs' rankings, then the pooled one with its own tasks (no column it lacks)
        frame = res.ranking_frame(marked=True)
        tables = [frame_table(part.dropna(axis=1, how="all"), title=title)
                  for part, title in ((frame[frame["scope"] != POOLED], "language pairs"),
                                      (frame[frame["scope"] == POOLED], "pooled over the language pairs"))]
        if res.intervals:
            level = f"{100 * (1 - res.alpha):g}%"
            spans = res.interval_frame(marked=True)
            tables += [frame_table(part.dropna(axis=1, how="all").fillna("-"), title=title)
                       for part, title in ((spans[spans["scope"] != POOLED], f"{level} intervals, language pairs"),
                                           (spans[spans["scope"] == POOLED], f"{level} intervals, pooled"))]
        if res.human_baselines:
            tables.append(_verdict_table(res))
        return [*tables, *signature_footer(res, res.notes())]

    emit(render_text(result, fmt, terminal=terminal, width=output_width(output)), output)
