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
    """--dataset / --dataset-option / --scores (repeatable) / --human / --metric / --system /
    --exclude-system / --aggregation, and how score files are read: --system-column / --input-column /
    --annotator-column / --human-column / --where / --layout, each for every file or (``FILE=VALUE``) for
    one file.

    The command receives ``dataset, dataset_options, scores, human, metrics``; the other options are kept
    in the click context and applied by :func:`load_source`.
    """

    @functools.wraps(command)
    def wrapper(*args, systems=(), exclude_systems=(), aggregation=DEFAULT_AGGREGATION, system_column=(),
                input_column=(), annotator_column=(), human_column=(), where=(), layout=(), allow_unmatched=False,
                **kwargs):
        click.get_current_context().meta[_SOURCE_KEY] = {
            "systems": systems, "exclude_systems": exclude_systems, "aggregation": aggregation,
            "columns": {"system": system_column, "input": input_column, "annotator": annotator_column,
                        "human": human_column},
            "where": where, "layout": layout, "allow_unmatched": allow_unmatched}
        return command(*args, **kwargs)

    options = [
        click.option("--dataset", help="A packaged dataset (see `metaeval datasets list`)."),
        click.option("--dataset-option", "dataset_options", multiple=True, metavar="KEY=VALUE",
                     help="Option of the packaged dataset, e.g. language_pair=de-en."),
        click.option("--scores", multiple=True, type=click.Path(dir_okay=False),
                     help="A score file: CSV, TSV, JSON Lines, JSON array or Parquet (repeatable, and combinable"
                          " with --dataset: joined on (system, input))."),
        *_reading_options(),
        click.option("--human", help="The human scorer (default: the dataset's)."),
        click.option("--metric", "metrics", multiple=True,
                     help="A metric scorer (repeatable; default: every scorer that is not human)."),
        click.option("--system", "systems", multiple=True,
                     help="Keep only these systems (repeatable; default: all)."),
        click.option("--exclude-system", "exclude_systems", multiple=True,
                     help="Leave this system out (repeatable), e.g. a human reference scored as a system."),
        click.option("--aggregation", type=click.Choice(AGGREGATIONS), default=DEFAULT_AGGREGATION,
                     show_default=True, help="How several annotators per cell become one score."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _reading_options() -> list:
    """How score files are read: --system-column / --input-column / --annotator-column / --human-column /
    --where / --layout, each for every file or (``FILE=VALUE``) for one file."""
    per_file = " Give FILE=VALUE to apply it to one of the --scores files only."
    return [
        click.option("--system-column", multiple=True, metavar="[FILE=]COLUMN",
                     help="The score files' column of system labels (default: system)." + per_file),
        click.option("--input-column", multiple=True, metavar="[FILE=]COLUMN",
                     help="The score files' column of input labels (default: input)." + per_file),
        click.option("--annotator-column", multiple=True, metavar="[FILE=]COLUMN",
                     help="The score files' column of annotator labels (default: a column 'annotator' that tells"
                          " several rows of a cell apart)." + per_file),
        click.option("--human-column", multiple=True, metavar="[FILE=]COLUMN",
                     help="A score files' column of human scores (it becomes the --human)." + per_file),
        click.option("--where", multiple=True, metavar="[FILE=]COLUMN=VALUE",
                     help="Keep only the score files' rows with this value in this column (repeatable)." + per_file),
        click.option("--layout", multiple=True, metavar="[FILE=]auto|wide|long",
                     help="wide: a column per scorer; long: columns scorer and score; auto (default): long when"
                          " the header has both scorer and score." + per_file),
        click.option("--allow-unmatched", is_flag=True,
                     help="Join score files whose systems or inputs are unmatched on both sides, or whose integer"
                          " ids look shifted by one (by default an error: see docs/data.md, Joining files)."),
    ]


READING_FLAGS = ("--system-column", "--input-column", "--annotator-column", "--human-column", "--where", "--layout")


def reading_options(command: Callable) -> Callable:
    """The score-file options of :func:`source_options` alone (--system-column, --input-column,
    --annotator-column, --human-column, --where, --layout, --aggregation), for a command that reads its
    ``--scores`` itself and calls :func:`load_source` on them (``metaeval mt``, per language pair). The
    command receives ``reading``: the flags given, as ``{flag: values}``."""

    @functools.wraps(command)
    def wrapper(*args, aggregation=DEFAULT_AGGREGATION, system_column=(), input_column=(), annotator_column=(),
                human_column=(), where=(), layout=(), allow_unmatched=False, **kwargs):
        click.get_current_context().meta[_SOURCE_KEY] = {
            "aggregation": aggregation,
            "columns": {"system": system_column, "input": input_column, "annotator": annotator_column,
                        "human": human_column},
            "where": where, "layout": layout, "allow_unmatched": allow_unmatched}
        given = dict(zip(READING_FLAGS, (system_column, input_column, annotator_column, human_column, where, layout)))
        return command(*args, reading={flag: values for flag, values in given.items() if values}, **kwargs)

    for option in reversed((*_reading_options(),
                            click.option("--aggregation", type=click.Choice(AGGREGATIONS), default=DEFAULT_AGGREGATION,
                                         show_default=True, help="How several annotators per cell become one score."))):
        wrapper = option(wrapper)
    return wrapper


def file_options(flag: str, values: tuple[str, ...], files: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """(the value for every file, {file: its own value}) of a repeatable ``[FILE=]VALUE`` option: a value
    that starts with one of the ``--scores`` files and ``=`` is that file's own (the longest such file:
    :func:`metaeval.data.targets.split_target`)."""
    from ..data.targets import split_target

    shared, own = None, {}
    for value in values:
        head, rest = split_target(value, files)
        if head is not None:
            if head in own:
                raise ParameterError(f"`{flag}` must be given once per file; got {own[head]!r} and {rest!r} for {head!r}.")
            own[head] = rest
        elif shared is not None:
            raise ParameterError(f"`{flag}` without FILE= applies to every file and must be given once; got"
                                 f" {shared!r} and {value!r} (write FILE=VALUE for one file's own value).")
        else:
            shared = value
    return shared, own


def _where_pairs(values: tuple[str, ...], files: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """The ``--where`` pairs for every file and those of each file (``FILE=COLUMN=VALUE``)."""
    from ..data.targets import split_target

    shared, own = [], {}
    for value in values:
        head, rest = split_target(value, files)
        if head is not None and "=" in rest:
            own.setdefault(head, []).append(rest)
        else:
            shared.append(value)
    return tuple(shared), {f: tuple(v) for f, v in own.items()}


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
                human: str | None, *, other_files: tuple[str, ...] = (),
                human_optional: bool = False) -> tuple[ScoreSet, str | None]:
    """The ScoreSet named on the command line (the dataset and every score file joined on (system, input),
    ``--system`` / ``--exclude-system`` and ``--aggregation`` applied) and its human scorer.

    ``human_optional``: a command that compares systems under a scorer it is given needs no human; without
    one in the data the human is then None instead of an error.

    ``other_files``: score files of the command read by other calls (``metaeval mt``'s other language
    pairs); a ``FILE=VALUE`` option of one of them is not this call's."""
    from ..data.columns import CLI_NAMES, OPTION_NAMES, SHARED_OPTIONS, parse_where
    from ..data.readers import LAYOUTS

    context = click.get_current_context(silent=True)
    chosen = context.meta.get(_SOURCE_KEY, {}) if context is not None else {}
    systems = chosen.get("systems", ())
    excluded = chosen.get("exclude_systems", ())
    aggregation = chosen.get("aggregation", DEFAULT_AGGREGATION)
    files = (scores,) if isinstance(scores, str) else tuple(scores or ())
    if dataset is None and not files:
        raise ParameterError("`--dataset` or `--scores` must be given; got neither.")
    other = set(other_files) - set(files)

    def own(values, where=False):  # leave out the values of the other calls' files
        from ..data.targets import split_target

        targets = [(v, *split_target(v, (*files, *other))) for v in values]
        return tuple(v for v, head, rest in targets if not (head in other and (not where or "=" in rest)))

    mapped = {role: file_options(f"--{role}-column", own(values), files)
              for role, values in chosen.get("columns", {}).items()}
    shared_columns = {role: value for role, (value, _) in mapped.items() if value}
    layout_all, layouts = file_options("--layout", own(chosen.get("layout", ())), files)
    for value in (layout_all, *layouts.values()):
        if value is not None and value not in LAYOUTS:
            raise ParameterError(f"`--layout` must be one of {', '.join(map(repr, LAYOUTS))}; got {value!r}.")
    where_all, where_own = _where_pairs(own(chosen.get("where", ()), where=True), files)
    token, shared = OPTION_NAMES.set(CLI_NAMES), SHARED_OPTIONS.set(len(files) > 1)
    try:
        ds, default_human = None, shared_columns.get("human")
        if dataset is not None:
            ds = load_dataset(dataset, **parse_dataset_options(dataset_options))
            default_human = default_human or dataset_info(dataset).get("default_human")
        if dataset is None and len(files) == 1:  # data errors are then about this one file
            SOURCE_FILE.set(str(files[0]))
        human_columns = []
        for path in files:
            columns = {**shared_columns, **{role: own[path] for role, (_, own) in mapped.items() if path in own}}
            if columns.get("human"):
                human_columns.append(columns["human"])
            where = parse_where((*where_all, *where_own.get(path, ())))
            read = read_scores(path, columns=columns, where=where, layout=layouts.get(path, layout_all or "auto"))
            if default_human is None and len(read.humans) == 1:
                default_human = read.humans[0]
            ds = read if ds is None else ds.merge(read, allow_unmatched=chosen.get("allow_unmatched", False))
    finally:
        OPTION_NAMES.reset(token)
        SHARED_OPTIONS.reset(shared)
    for column in dict.fromkeys(human_columns):
        ds.require(column, param="--human-column")
    default_human = default_human or (human_columns[0] if human_columns else None)
    human = human or default_human
    if human is None and not human_optional:
        raise ParameterError(
            f"`--human` must name the human scorer of {', '.join(map(str, files)) or dataset}; got none, and the file"
            f" marks {len(ds.humans)} scorers as human ({', '.join(ds.humans) or 'none'})."
        )
    if human is not None:
        ds.require(human, param="--human")
        if human not in ds.humans:
            ds = ds.with_humans(tuple(ds.humans) + (human,))
    if systems:
        ds = ds.subset(systems=systems)
    if excluded:
        ds = without_systems(ds, excluded)
    if aggregation != ds.aggregation:
        ds = ds.with_aggregation(aggregation)
    if context is not None and context.params.get("n_resamples") is not None:  # before any computing
        from .._validation import check_resample_memory

        check_resample_memory(context.params["n_resamples"], *ds.shape, param="--n-resamples")
    return ds, human


def without_systems(ds: ScoreSet, excluded: tuple[str, ...]) -> ScoreSet:
    """``ds`` without the ``--exclude-system`` systems (each must be one of its systems)."""
    from ..data.scoreset import _suggestion

    for name in excluded:
        if name not in ds.systems:
            raise ParameterError(f"`--exclude-system` must name a system of the scores; got {name!r}"
                                 f"{_suggestion(name, ds.systems)}.")
    kept = [s for s in ds.systems if s not in set(excluded)]
    if not kept:
        raise ParameterError("`--exclude-system` must leave at least one system; got every system excluded.")
    return ds.subset(systems=kept)


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
        help="Scores a, b tie in rank statistics when |a - b| <= this * the spread of their vector "
             "(or 2^-46 * its largest magnitude); 0 = exact (as scipy).",
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
    recorded = _recorded_signatures()
    for metric in dict.fromkeys(metrics):
        if metric not in ds.metrics:
            raise ParameterError(f"`--corpus-metric` must name a metric of {where}; got {metric!r}, which is not "
                                 f"one (score its segments with `metaeval score --metric {metric}` too).")
        options = _recorded_options(metric, recorded.get(metric))
        statistics, aggregate = corpus_statistics(ds, candidates, references, metric, **options)
        out[metric] = CorpusScores(statistics, aggregate, metric, ds.systems, ds.inputs)
    return out


def _recorded_signatures() -> dict[str, tuple[str, str]]:
    """metric -> (score file, signature) recorded beside the running command's ``--scores`` files (the
    sidecars ``metaeval score`` writes; one that describes another version of its file is ignored)."""
    import hashlib
    import json

    from ..data.sidecar import sidecar_path

    context = click.get_current_context(silent=True)
    given = () if context is None else context.params.get("scores") or ()
    found: dict[str, tuple[str, str]] = {}
    for value in (given,) if isinstance(given, str) else given:
        path = Path(str(value).split("=", 1)[-1] if not Path(str(value)).exists() else str(value))
        try:
            side = json.loads(sidecar_path(path).read_text(encoding="utf-8"))
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except (OSError, ValueError):
            continue
        if not isinstance(side, dict) or (side.get("scores_file") or {}).get("sha256") != digest:
            continue
        for metric, signature in (side.get("signatures") or {}).items():
            if isinstance(signature, str):
                found.setdefault(metric, (str(path), signature))
    return found


def _recorded_options(metric: str, recorded: tuple[str, str] | None) -> dict:
    """The options a corpus metric is recomputed with: those its segment scores were made with (read from
    the recorded signature); a difference that cannot be carried over is refused."""
    if recorded is None:
        return {}
    from ..metrics.recorded import option_differences, recorded_options
    from ..metrics.registry import get_scorer

    import inspect

    from ..metrics.registry import METRICS

    path, signature = recorded
    options = recorded_options(signature, takes=inspect.signature(METRICS[metric]).parameters)
    try:
        recomputed = str(get_scorer(metric, **options).signature)
    except ParameterError:
        recomputed = str(get_scorer(metric).signature)
        options = {}
    differences = option_differences(signature, recomputed)
    if differences:
        raise ParameterError(f"`--corpus-metric {metric}` must recompute {metric} with the options of the segment scores"
                             f" in {path}; got other options ({'; '.join(differences)}): score the segments again"
                             " with the registry's options, or leave out --corpus-metric.")
    return options
