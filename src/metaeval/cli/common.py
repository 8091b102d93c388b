"""Options and helpers shared by the CLI commands: where scores come from, where results go."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import click

from .. import _validation as iv
from .. import defaults
from ..data.datasets import dataset_info, load_dataset
from ..data.readers import read_scores
from ..data.scoreset import AGGREGATIONS, DEFAULT_AGGREGATION, ScoreSet
from ..errors import ParameterError
from ..report.escape import safe_text
from ..report.formats import FORMATS
from ..runtime.files import write_text_atomic
from .main import SOURCE_FILE

_SOURCE_KEY = "metaeval.source"


def source_options(command: Callable) -> Callable:
    """--dataset / --dataset-option / --scores (repeatable) / --human / --metric / --system / --aggregation,
    and the column mapping of score files: --system-column / --input-column / --annotator-column /
    --human-column / --where.

    The command receives ``dataset, dataset_options, scores, human, metrics``; the other options are kept
    in the click context and applied by :func:`load_source`.
    """

    @functools.wraps(command)
    def wrapper(*args, systems=(), aggregation=DEFAULT_AGGREGATION, system_column=None, input_column=None,
                annotator_column=None, human_column=None, where=(), **kwargs):
        columns = {role: column for role, column in (("system", system_column), ("input", input_column),
                                                      ("annotator", annotator_column), ("human", human_column))
                   if column}
        click.get_current_context().meta[_SOURCE_KEY] = {"systems": systems, "aggregation": aggregation,
                                                         "columns": columns, "where": where}
        return command(*args, **kwargs)

    options = [
        click.option("--dataset", help="A packaged dataset (see `metaeval datasets list`)."),
        click.option("--dataset-option", "dataset_options", multiple=True, metavar="KEY=VALUE",
                     help="Option of the packaged dataset, e.g. language_pair=de-en."),
        click.option("--scores", multiple=True, type=click.Path(dir_okay=False),
                     help="A score file: CSV, TSV, JSON Lines, JSON array or Parquet (repeatable, and combinable"
                          " with --dataset: joined on (system, input))."),
        click.option("--system-column", help="The score files' column of system labels (default: system)."),
        click.option("--input-column", help="The score files' column of input labels (default: input)."),
        click.option("--annotator-column", help="The score files' column of annotator labels (default: a column"
                                                " 'annotator' that tells several rows of a cell apart)."),
        click.option("--human-column", help="A score files' column of human scores (it becomes the --human)."),
        click.option("--where", multiple=True, metavar="COLUMN=VALUE",
                     help="Keep only the score files' rows with this value in this column (repeatable)."),
        click.option("--human", help="The human scorer (default: the dataset's)."),
        click.option("--metric", "metrics", multiple=True,
                     help="A metric scorer (repeatable; default: every scorer that is not human)."),
        click.option("--system", "systems", multiple=True,
                     help="Keep only these systems (repeatable; default: all)."),
        click.option("--aggregation", type=click.Choice(AGGREGATIONS), default=DEFAULT_AGGREGATION,
                     show_default=True, help="How several annotators per cell become one score."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def output_options(command: Callable) -> Callable:
    command = click.option("--output", type=click.Path(), help="Write to this file instead of the terminal.")(command)
    command = click.option("--format", "fmt", type=click.Choice(FORMATS), default=defaults.OUTPUT_FORMAT, show_default=True,
                           help="Output format.")(command)
    return command


def parse_dataset_options(pairs: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ParameterError(f"`--dataset-option` must look like KEY=VALUE; got {pair!r}.")
        parsed[key.replace("-", "_")] = value
    return parsed


def load_source(dataset: str | None, dataset_options: tuple[str, ...], scores: tuple[str, ...] | str | None,
                human: str | None) -> tuple[ScoreSet, str]:
    """The ScoreSet named on the command line (the dataset and every score file joined on (system, input),
    ``--system`` subset and ``--aggregation`` applied) and its human scorer."""
    from ..data.columns import CLI_NAMES, OPTION_NAMES, SHARED_OPTIONS, parse_where

    context = click.get_current_context(silent=True)
    chosen = context.meta.get(_SOURCE_KEY, {}) if context is not None else {}
    systems = chosen.get("systems", ())
    aggregation = chosen.get("aggregation", DEFAULT_AGGREGATION)
    columns = chosen.get("columns", {})
    files = (scores,) if isinstance(scores, str) else tuple(scores or ())
    if dataset is None and not files:
        raise ParameterError("`--dataset` or `--scores` must be given; got neither.")
    token, shared = OPTION_NAMES.set(CLI_NAMES), SHARED_OPTIONS.set(len(files) > 1)
    try:
        where = parse_where(chosen.get("where", ()))
        ds, default_human = None, columns.get("human")
        if dataset is not None:
            ds = load_dataset(dataset, **parse_dataset_options(dataset_options))
            default_human = default_human or dataset_info(dataset).get("default_human")
        if dataset is None and len(files) == 1:  # data errors are then about this one file
            SOURCE_FILE.set(str(files[0]))
        for path in files:
            read = read_scores(path, columns=columns, where=where)
            if default_human is None and len(read.humans) == 1:
                default_human = read.humans[0]
            ds = read if ds is None else ds.merge(read)
    finally:
        OPTION_NAMES.reset(token)
        SHARED_OPTIONS.reset(shared)
    if columns.get("human") is not None:
        ds.require(columns["human"], param="--human-column")
    human = human or default_human
    if human is None:
        raise ParameterError(
            f"`--human` must name the human scorer of {', '.join(map(str, files)) or dataset}; got none, and the file"
            f" marks {len(ds.humans)} scorers as human ({', '.join(ds.humans) or 'none'})."
        )
    ds.require(human, param="--human")
    if human not in ds.humans:
        ds = ds.with_humans(tuple(ds.humans) + (human,))
    if systems:
        ds = ds.subset(systems=systems)
    if aggregation != ds.aggregation:
        ds = ds.with_aggregation(aggregation)
    if context is not None and context.params.get("n_resamples") is not None:  # before any computing
        from .._validation import check_resample_memory

        check_resample_memory(context.params["n_resamples"], *ds.shape, param="--n-resamples")
    return ds, human


def chosen_metrics(ds: ScoreSet, human: str, metrics: tuple[str, ...]) -> list[str]:
    if metrics:
        for metric in metrics:
            ds.require(metric, param="--metric")
        return list(metrics)
    return [m for m in ds.metrics if m != human]


def say(text: str, *, err: bool = False) -> None:
    """Print one message line that may hold user strings (file, metric names), made terminal-safe."""
    click.echo(safe_text(text), err=err)


def output_width(output: str | None = None) -> int:
    """Width of the text tables: the terminal's (``$COLUMNS``, else its size) when printing to the terminal,
    :data:`metaeval.report.render.TERMINAL_WIDTH` (100) for files, pipes and ``--output``."""
    import shutil

    from ..report.render import TERMINAL_WIDTH

    if output:
        return TERMINAL_WIDTH
    return max(40, shutil.get_terminal_size((TERMINAL_WIDTH, 24)).columns)


def emit(text: str, output: str | None) -> None:
    """Print ``text`` or write it atomically to ``output``."""
    if output:
        write_text_atomic(Path(output), text)
    else:
        click.echo(text, nl=False)


def seed_option(command: Callable) -> Callable:
    return click.option("--seed", type=int, default=defaults.SEED, show_default=True,
                        help="Seed of every resampling.")(command)


def resamples_option(command: Callable) -> Callable:
    return click.option("--n-resamples", type=int, default=defaults.N_RESAMPLES, show_default=True,
                        help="Bootstrap / permutation resamples.")(command)


def tie_tolerance_option(command: Callable) -> Callable:
    """--tie-tolerance: the command runs under this tie rule (every library call inherits it)."""

    @functools.wraps(command)
    def wrapper(*args, tie_tolerance=defaults.TIE_TOLERANCE, **kwargs):
        with iv.tie_rule(tie_tolerance):
            return command(*args, **kwargs)

    return click.option(
        "--tie-tolerance", type=click.FloatRange(0.0, 1e-3), default=defaults.TIE_TOLERANCE, show_default=True,
        help="Scores a, b tie in rank statistics when |a - b| <= this * max(|a|, |b|); 0 = exact (as scipy).",
    )(wrapper)


def corpus_options(command: Callable) -> Callable:
    """--corpus-metric / --candidates / --references, passed to the command as ``corpus_texts``."""

    @functools.wraps(command)
    def wrapper(*args, corpus_metrics=(), candidates=None, references=None, **kwargs):
        return command(*args, corpus_texts=(corpus_metrics, candidates, references), **kwargs)

    from ..scoring.corpus import CORPUS_METRICS

    for decorator in reversed((
        click.option("--corpus-metric", "corpus_metrics", multiple=True, type=click.Choice(CORPUS_METRICS),
                     help="System level: score systems with this metric's corpus score (summed sufficient "
                          "statistics), not the mean of its segment scores (repeatable; needs --candidates and "
                          "--references)."),
        click.option("--candidates", metavar="PATH", help="With --corpus-metric: the system outputs, as for "
                                                          "`metaeval score`."),
        click.option("--references", metavar="PATH", help="With --corpus-metric: the references."),
    )):
        wrapper = decorator(wrapper)
    return wrapper


def corpus_statistics_for(ds: ScoreSet, metrics, candidates, references, *, where: str = "the scores") -> dict:
    """``{metric: CorpusScores}`` of the corpus metrics, from the texts, aligned with ``ds``."""
    from ..scoring.corpus import corpus_statistics
    from ..stats.corpus import CorpusScores

    if not metrics:
        if candidates or references:
            raise ParameterError("`--candidates` and `--references` must come with `--corpus-metric`; got no"
                                 " --corpus-metric.")
        return {}
    if not candidates or not references:
        raise ParameterError("`--corpus-metric` must come with `--candidates` and `--references`; got "
                             + ("neither." if not (candidates or references) else
                                f"no {'--candidates' if not candidates else '--references'}."))
    out = {}
    for metric in dict.fromkeys(metrics):
        if metric not in ds.metrics:
            raise ParameterError(f"`--corpus-metric` must name a metric of {where}; got {metric!r}, which is not "
                                 f"one (score its segments with `metaeval score --metric {metric}` too).")
        statistics, aggregate = corpus_statistics(ds, candidates, references, metric)
        out[metric] = CorpusScores(statistics, aggregate, metric, ds.systems, ds.inputs)
    return out
