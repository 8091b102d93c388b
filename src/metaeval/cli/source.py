"""The scores a command line names: packaged datasets and score files, read and joined.

:class:`Source` is what the source options of :mod:`metaeval.cli.common` say (which dataset, which files,
which human, metrics and systems); :class:`Reading` how the files are read (their columns, filters, layout,
scorer names). :func:`load_source` turns them into a ScoreSet and its human scorer.

``--scores NAME=PATH`` names the file's one scorer: an argument is ``NAME=PATH`` only when ``PATH`` exists
and the whole argument does not (a file called ``a=b.csv`` is read as itself). A per-file option
``FILE=VALUE`` names the file as given to ``--scores`` (its ``PATH``); the longest file name that the
value starts with, followed by ``=``, wins, so a file name holding ``=`` can be targeted too.
"""
from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..data.columns import OptionNames, parse_where
from ..data.scoreset import DEFAULT_AGGREGATION, ScoreSet
from ..errors import DegenerateDataError, InputFileError, ParameterError, ScoreSetError

CLI_NAMES = OptionNames(system="--system-column", input="--input-column", annotator="--annotator-column",
                        human="--human-column", where="--where", where_hint="--where COLUMN=VALUE",
                        rename="--rename", scorer="--scores NAME=PATH")
"""How reading errors name the command line's options."""


@dataclass(frozen=True)
class Reading:
    """How score files are read: each option's values as given (``[FILE=]VALUE``)."""

    system_column: tuple[str, ...] = ()
    input_column: tuple[str, ...] = ()
    annotator_column: tuple[str, ...] = ()
    human_column: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    layout: tuple[str, ...] = ()
    file_format: tuple[str, ...] = ()
    rename: tuple[str, ...] = ()
    rename_system: tuple[str, ...] = ()
    allow_unmatched: bool = False
    aggregation: str = DEFAULT_AGGREGATION

    @classmethod
    def of(cls, values: dict) -> Reading:
        return cls(**{k: tuple(v) if isinstance(v, (tuple, list)) else v for k, v in values.items()})

    def given(self) -> dict[str, tuple[str, ...]]:
        """``{flag: values}`` of the reading options given (aggregation aside)."""
        names = ("system_column", "input_column", "annotator_column", "human_column", "where", "layout",
                 "file_format", "rename", "rename_system")
        return {"--" + n.replace("_", "-"): getattr(self, n) for n in names if getattr(self, n)}


@dataclass(frozen=True)
class Source:
    """The scores a command meta-evaluates: ``--dataset`` (and its options), ``--scores``, ``--human``,
    ``--metric``, ``--system``, ``--exclude-system`` and the :class:`Reading` of the files."""

    dataset: str | None = None
    dataset_option: tuple[str, ...] = ()
    scores: tuple[str, ...] = ()
    human: str | None = None
    metric: tuple[str, ...] = ()
    system: tuple[str, ...] = ()
    exclude_system: tuple[str, ...] = ()
    reading: Reading = field(default_factory=Reading)

    @property
    def origin(self) -> str | None:
        """The one score file the data come from (named in data errors), or None."""
        if self.dataset is None and len(self.scores) == 1:
            return scores_argument(self.scores[0])[1]
        return None


@contextlib.contextmanager
def located(origin: str | None) -> Iterator[None]:
    """Data errors (too few systems, an unknown scorer) raised inside are prefixed with ``origin``, the user
    file the data came from; the innermost ``located`` decides (None: no file to name)."""
    try:
        yield
    except (ScoreSetError, DegenerateDataError) as error:
        if not getattr(error, "located", False):
            if origin is not None and not isinstance(error, InputFileError):
                error.args = (f"{origin}: {error}", *error.args[1:])
            error.located = True
        raise


def located_by(origin: Callable[[dict], str | None]) -> Callable:
    """A command whose data errors name ``origin(parameters)`` (see :func:`located`)."""
    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def wrapper(**kwargs):
            with located(origin(kwargs)):
                return command(**kwargs)
        return wrapper
    return decorate


def scores_argument(item: str) -> tuple[str | None, str]:
    """``--scores`` ``NAME=PATH`` -> (NAME, PATH) when PATH exists and the whole argument does not; else
    (None, the argument)."""
    name, sep, path = item.partition("=")
    if sep and name and path and not os.path.exists(item) and os.path.exists(path):
        return name, path
    return None, item


def split_file(value: str, files: tuple[str, ...]) -> tuple[str | None, str]:
    """``FILE=VALUE`` -> (FILE, VALUE) for the longest of ``files`` the value starts with (then ``=``);
    (None, value) otherwise (:func:`metaeval.data.targets.split_target`)."""
    from ..data.targets import split_target

    return split_target(value, files)


def file_options(flag: str, values: tuple[str, ...], files: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """(the value for every file, {file: its own value}) of a repeatable ``[FILE=]VALUE`` option."""
    shared, own = None, {}
    for value in values:
        head, rest = split_file(value, files)
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


def _each_file(values: tuple[str, ...], files: tuple[str, ...], *, pair: bool) -> tuple[tuple[str, ...], dict]:
    """The values of a repeatable option for every file and those of each file (``FILE=VALUE``); with
    ``pair`` (``--where COLUMN=VALUE``) a value is a file's own only if what follows ``FILE=`` has ``=`` too."""
    shared, own = [], {}
    for value in values:
        head, rest = split_file(value, files)
        if head is not None and (not pair or "=" in rest):
            own.setdefault(head, []).append(rest)
        else:
            shared.append(value)
    return tuple(shared), {f: tuple(v) for f, v in own.items()}


def parse_renames(values: tuple[str, ...]) -> dict[str, str]:
    """``("score:COMET",)`` -> ``{"score": "COMET"}``."""
    out = {}
    for value in values:
        old, sep, new = value.rpartition(":")
        if not sep or not old or not new:
            raise ParameterError(f"`--rename` must look like [FILE=]OLD:NEW; got {value!r}.")
        out[old] = new
    return out


def _check_system_renames(values: tuple[str, ...], renamed: set[str], known: tuple[str, ...]) -> None:
    """A ``--rename-system OLD:NEW`` for every file whose OLD names no system of any file is a typo: refused."""
    unmatched = [o for o in _system_renames(values) if o not in renamed]
    if unmatched:
        from ..data.scoreset import _suggestion

        raise ParameterError(f"`--rename-system` must rename a system of the --scores files; got {unmatched[0]!r}"
                             f"{_suggestion(unmatched[0], tuple(dict.fromkeys(known)))}.")


def _system_renames(values: tuple[str, ...]) -> dict[str, str]:
    """``("Onl-B:Online-B",)`` -> ``{"Onl-B": "Online-B"}`` (the last ``:`` splits, as for --rename)."""
    out = {}
    for value in values:
        old, sep, new = value.rpartition(":")
        if not sep or not old or not new:
            raise ParameterError(f"`--rename-system` must look like [FILE=]OLD:NEW; got {value!r}.")
        out[old] = new
    return out


def parse_dataset_options(pairs: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ParameterError(f"`--dataset-option` must look like KEY=VALUE; got {pair!r}.")
        parsed[key.replace("-", "_")] = value
    return parsed


def read_files(arguments: tuple[str, ...], reading: Reading, *, other_files: tuple[str, ...] = (),
               ds: ScoreSet | None = None) -> tuple:
    """(``ds`` and the ``--scores`` arguments joined on (system, input), in this order, or None; the
    ``--human-column`` for every file; the first file's one human scorer; every human column) read as
    ``reading`` says. ``other_files``: files of the same command read by other calls; a ``FILE=VALUE``
    option of one of them is not this call's."""
    from ..data.formats import READ_FORMATS
    from ..data.readers import LAYOUTS, read_scores

    named = [scores_argument(a) for a in arguments]
    files = tuple(path for _, path in named)
    other = set(other_files) - set(files)

    def own(values, pair=False):  # leave out the values of the other calls' files
        return tuple(v for v in values if split_file(v, tuple(other))[0] is None
                     or (pair and "=" not in split_file(v, tuple(other))[1]))

    roles = {"system": reading.system_column, "input": reading.input_column,
             "annotator": reading.annotator_column, "human": reading.human_column}
    mapped = {role: file_options(f"--{role}-column", own(values), files) for role, values in roles.items()}
    shared_columns = {role: value for role, (value, _) in mapped.items() if value}
    layout_all, layouts = file_options("--layout", own(reading.layout), files)
    for value in (layout_all, *layouts.values()):
        if value is not None and value not in LAYOUTS:
            raise ParameterError(f"`--layout` must be one of {', '.join(map(repr, LAYOUTS))}; got {value!r}.")
    format_all, formats = file_options("--file-format", own(reading.file_format), files)
    for value in (format_all, *formats.values()):
        if value is not None and value not in READ_FORMATS:
            raise ParameterError(f"`--file-format` must be one of {', '.join(map(repr, READ_FORMATS))}; got {value!r}.")
    where_all, where_own = _each_file(own(reading.where, pair=True), files, pair=True)
    rename_all, rename_own = _each_file(own(reading.rename), files, pair=False)
    systems_all, systems_own = _each_file(own(reading.rename_system), files, pair=False)
    files_human, human_columns = None, []
    renamed_somewhere: set[str] = set()
    for (name, path) in named:
        _not_for_ratings(path, files, {f"--{role}-column": value for role, value in shared_columns.items()},
                         where_all, layout_all)
        columns = {**shared_columns, **{role: own[path] for role, (_, own) in mapped.items() if path in own}}
        if columns.get("human"):
            human_columns.append(columns["human"])
        where = parse_where((*where_all, *where_own.get(path, ())), CLI_NAMES)
        read = read_scores(path, columns=columns, where=where, layout=layouts.get(path, layout_all or "auto"),
                           rename=parse_renames((*rename_all, *rename_own.get(path, ()))) or None, scorer=name,
                           option_names=CLI_NAMES, shared_mapping=len(files) > 1,
                           format=formats.get(path, format_all),
                           required_where=tuple(parse_where(where_own.get(path, ()), CLI_NAMES)))
        every, mine = _system_renames(systems_all), _system_renames(systems_own.get(path, ()))
        if every or mine:  # a file's own renames must name its systems; one for every file, some file's
            applied = {**{o: n for o, n in every.items() if o in read.systems}, **mine}
            renamed_somewhere.update(o for o in every if o in read.systems)
            try:
                read = read.with_system_names(applied, param="--rename-system")
            except ParameterError as error:  # name the file whose systems these are
                raise InputFileError(path, str(error)) from None
        if files_human is None:
            files_human = read.default_human
        try:
            ds = read if ds is None else ds.merge(read, allow_unmatched=reading.allow_unmatched)
        except ScoreSetError:
            _check_system_renames(systems_all, renamed_somewhere, (*ds.systems, *read.systems))
            raise
    _check_system_renames(systems_all, renamed_somewhere, tuple(ds.systems) if ds is not None else ())
    return ds, shared_columns.get("human"), files_human, tuple(dict.fromkeys(human_columns))


def _not_for_ratings(path: str, files: tuple[str, ...], columns: dict[str, str], where: tuple[str, ...],
                     layout: str | None) -> None:
    """Refuse an option given for every file (no ``FILE=``) when ``path`` is an MQM ratings file: its columns
    are fixed, and the option would make it a plain table (``--input-column seg_id`` meant for a metric file
    turned the ratings into a CSV read that failed at row 5059)."""
    from ..data.mqm_ratings import is_mqm_ratings_file

    given = [(flag, value) for flag, value in columns.items()] + [("--where", w) for w in where]
    if layout is not None:
        given.append(("--layout", layout))
    if not given or not is_mqm_ratings_file(path):
        return
    flag, value = given[0]
    others = [f for f in files if f != path]
    hint = (f"give it for the metric file alone as {flag} {others[0]}={value}" if others
            else "drop it (an MQM ratings file is read with its own columns)")
    raise ParameterError(f"`{flag}` {value!r} applies to every --scores file, and {path} is an MQM ratings file"
                         f" (read with its own columns: system, seg_id, rater, ...): {hint}.")


def load_source(source: Source, *, other_files: tuple[str, ...] = (),
                human_optional: bool = False, n_resamples: int | None = None) -> tuple[ScoreSet, str | None]:
    """The ScoreSet ``source`` names (the dataset and every score file joined on (system, input),
    ``--system`` / ``--exclude-system`` and ``--aggregation`` applied) and its human scorer.

    ``human_optional``: a command that compares systems under a scorer it is given needs no human; without
    one in the data the human is then None instead of an error. ``other_files``: score files of the command
    read by other calls (``metaeval mt``'s other language pairs). ``n_resamples``: checked against the
    memory the resamples of these data would take, before any computing."""
    from ..data.datasets import dataset_info, load_dataset

    files = tuple(scores_argument(a)[1] for a in source.scores)
    if source.dataset is None and not files:
        raise ParameterError("`--dataset` or `--scores` must be given; got neither.")
    with located(files[0] if source.dataset is None and len(files) == 1 else None):
        ds, dataset_human = None, None
        if source.dataset is not None:
            ds = load_dataset(source.dataset, **parse_dataset_options(source.dataset_option))
            dataset_human = dataset_info(source.dataset).get("default_human")
        ds, column_human, files_human, human_columns = read_files(source.scores, source.reading,
                                                                  other_files=other_files, ds=ds)
        for column in human_columns:
            ds.require(column, param="--human-column")
        human = (source.human or column_human or dataset_human or files_human
                 or (human_columns[0] if human_columns else None))
        if human is None and not human_optional:
            raise ParameterError(
                f"`--human` must name the human scorer of {', '.join(map(str, files)) or source.dataset}; got none,"
                f" and the file marks {len(ds.humans)} scorers as human ({', '.join(ds.humans) or 'none'})."
            )
        if human is not None:
            ds.require(human, param="--human")
            if human not in ds.humans:
                ds = ds.with_humans(tuple(ds.humans) + (human,))
        if source.system:
            ds = ds.subset(systems=source.system)
        if source.exclude_system:
            ds = without_systems(ds, source.exclude_system)
        if source.reading.aggregation != ds.aggregation:
            ds = ds.with_aggregation(source.reading.aggregation)
        if human is not None:  # refused as `metaeval mt` refuses it, instead of ignored (issue 41 item 2)
            from .._validation import check_gold_aggregation

            check_gold_aggregation(ds, human, param="--aggregation")
        if n_resamples is not None:
            from .._validation import check_resample_memory

            check_resample_memory(n_resamples, *ds.shape, param="--n-resamples")
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
        out[metric] = CorpusScores(statistics, aggregate, metric, ds.systems, ds.inputs,
                                   source=f"{_file_names(candidates)},{_file_names(references)}"
                                          f"{_options_note(metric, options)}")
    return out


def _options_note(metric: str, options: dict) -> str:
    """`` with tokenize=intl,lowercase=True``: the options other than the registry's defaults a corpus metric is
    recomputed with (read from its score file's sidecar, which the signature does not name), so that the texts'
    field of a signature rebuilds the statistics (issue 41); empty at the defaults."""
    import inspect

    from ..metrics.registry import METRICS

    parameters = inspect.signature(METRICS[metric]).parameters
    other = {k: v for k, v in options.items() if k not in parameters or parameters[k].default != v}
    return f" with {','.join(f'{k}={v}' for k, v in other.items())}" if other else ""


def _file_names(paths) -> str:
    """The file name(s) of a texts argument (one path or several), for a signature."""
    from pathlib import Path

    return "+".join(Path(str(p)).name for p in ((paths,) if isinstance(paths, (str, os.PathLike)) else paths))


def _recorded_signatures() -> dict[str, tuple[str, str]]:
    """metric -> (score file, signature) recorded beside the running command's ``--scores`` files (the
    sidecars ``metaeval score`` writes; one that describes another version of its file is ignored)."""
    import hashlib
    import json
    from pathlib import Path

    import click

    from ..data.sidecar import sidecar_path

    context = click.get_current_context(silent=True)
    given = () if context is None else context.params.get("scores") or ()
    found: dict[str, tuple[str, str]] = {}
    for value in (given,) if isinstance(given, str) else given:
        path = Path(scores_argument(str(value))[1])
        if not path.exists():  # an LP=PATH of `metaeval mt`
            path = Path(str(value).split("=", 1)[-1])
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
    import inspect

    from ..metrics.recorded import option_differences, recorded_options
    from ..metrics.registry import METRICS, get_scorer

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
