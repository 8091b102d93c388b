"""Every option of the CLI, declared once, and the decorators that put groups of them on a command.

:data:`OPTIONS` holds each option's one declaration (flag, type, default, help), keyed by its parameter
name: the flag is that name with dashes (``confidence_level`` is ``--confidence-level``) and the
command receives the value under that name. A command takes an option with :func:`option`, giving
only what differs for it (a help text that says what the value means there, a default, ``multiple``).
Options only one command has are declared here too, so the whole command line reads in one place.

Reading the scores the options name is :mod:`metaeval.cli.source`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .. import defaults
from ..data.scoreset import AGGREGATIONS, DEFAULT_AGGREGATION
from .help import Context
from ..vocabulary import (
    ALTERNATIVES,
    COEFFICIENT_CHOICES,
    CORRECTIONS,
    FAMILIES,
    JUDGE_RESAMPLING,
    LEVEL_CHOICES,
    OUTPUT_FORMATS,
    RESAMPLING_METHODS,
)

PER_FILE = " Give FILE=VALUE to apply it to one of the --scores files only."
CHOICES_INLINE = 30
"""A choice list longer than this is written into the help text, not after the flag (80-column help)."""

class NumberList(click.ParamType):
    """A comma-separated list of numbers, e.g. ``10,20,50``."""

    def __init__(self, kind: type = float):
        self.kind = kind
        self.name = "integers" if kind is int else "numbers"

    def convert(self, value: Any, param, ctx) -> tuple:
        if isinstance(value, tuple):
            return value
        try:
            return tuple(self.kind(v) for v in str(value).split(",") if v.strip())
        except ValueError:
            self.fail(f"must be comma-separated {self.name}; got {value!r}.", param, ctx)


OPTIONS: dict[str, dict[str, Any]] = {
    # where scores come from
    "dataset": dict(help="A packaged dataset (see `metaeval datasets list`)."),
    "dataset_option": dict(multiple=True, metavar="KEY=VALUE",
                           help="Option of the packaged dataset, e.g. language_pair=de-en (repeatable)."),
    "scores": dict(multiple=True, metavar="[NAME=]PATH",
                   help="A score file: CSV, TSV, JSON Lines, JSON array or Parquet (repeatable, and combinable with"
                        " --dataset: joined on (system, input)). NAME=PATH names the file's one scorer NAME (when"
                        " PATH exists and NAME=PATH does not)."),
    "system_column": dict(multiple=True, metavar="[FILE=]COLUMN",
                          help="The score files' column of system labels (default: system)." + PER_FILE),
    "input_column": dict(multiple=True, metavar="[FILE=]COLUMN",
                         help="The score files' column of input labels (default: input)." + PER_FILE),
    "annotator_column": dict(multiple=True, metavar="[FILE=]COLUMN",
                             help="The score files' column of annotator labels (default: a column 'annotator' that"
                                  " tells several rows of a cell apart)." + PER_FILE),
    "human_column": dict(multiple=True, metavar="[FILE=]COLUMN",
                         help="A score files' column of human scores (it becomes the --human)." + PER_FILE),
    "where": dict(multiple=True, metavar="[FILE=]COLUMN=VALUE",
                  help="Keep only the score files' rows with this value in this column (repeatable)." + PER_FILE),
    "layout": dict(multiple=True, metavar="[FILE=]auto|wide|long",
                   help="wide: a column per scorer; long: columns scorer and score; auto (default): long when the"
                        " header has both scorer and score." + PER_FILE),
    "file_format": dict(multiple=True, metavar="[FILE=]FORMAT",
                        help="A score file's format when its name does not tell it: csv, tsv, jsonl, parquet or"
                             " wmt-seg (a WMT metrics-task *.seg.score submission: 7 tab-separated fields, no"
                             " header; a name ending in .seg.score is read so without it)." + PER_FILE),
    "rename_system": dict(multiple=True, metavar="[FILE=]OLD:NEW",
                          help="Call a file's system OLD NEW before the files are joined, e.g. metric.csv=Onl-B:Online-B"
                               " (repeatable; recorded in the signature)." + PER_FILE),
    "allow_unmatched": dict(is_flag=True,
                            help="Join score files whose systems or inputs are unmatched on both sides, or whose"
                                 " integer ids look shifted by one (by default an error: see docs/data.md, Joining"
                                 " files)."),
    "rename": dict(multiple=True, metavar="[FILE=]OLD:NEW",
                   help="Call the files' scorer OLD NEW, e.g. results.csv=score:COMET (repeatable)." + PER_FILE),
    "human": dict(help="The human scorer (default: the dataset's, or the files' one human scorer)."),
    "metric": dict(multiple=True, help="A metric scorer (repeatable; default: every scorer that is not human)."),
    "human_baseline": dict(multiple=True, metavar="NAME",
                           help="A human scorer other than the gold (a second rater or a rater wave) scored as if it"
                                " were a metric, marked as human (repeatable)."),
    "protocol": dict(metavar="NAME|FILE.toml",
                     help="The MT protocol: wmt23, wmt24, wmt25 as mt-metrics-eval computes them, mean (the plain mean"
                          " of the task statistics), or a TOML file (docs/mt.md)."),
    "rater_waves": dict(type=int, metavar="N",
                        help="Split each segment's raters (MQM ratings with several raters per segment) at random"
                             " (--seed) into N waves, each averaged into a human scorer mqm.wave1, ..."),
    "system": dict(multiple=True, help="Keep only these systems (repeatable; default: all)."),
    "exclude_system": dict(multiple=True,
                           help="Leave this system out (repeatable), e.g. a human reference scored as a system."),
    "aggregation": dict(type=click.Choice(AGGREGATIONS), default=DEFAULT_AGGREGATION, show_default=True,
                        help="How several annotators per cell become one score."),
    "scorer": dict(help="The scorer with several annotators (with --dataset / --scores)."),
    "texts": dict(type=click.Path(dir_okay=False),
                  help="JSON Lines: {doc_id, system_id, summary, references: [...]} per line (the format of"
                       " summeval/texts.jsonl)."),
    "judgments": dict(type=click.Path(dir_okay=False), help="A judgments file."),
    "candidates": dict(metavar="PATH", help="With --corpus-metric: the system outputs, as for `metaeval score`."),
    "references": dict(metavar="PATH", help="With --corpus-metric: the references."),
    "corpus_metric": dict(multiple=True,
                          help="System level: score systems with this metric's corpus score (summed sufficient"
                               " statistics), not the mean of its segment scores (repeatable; needs --candidates"
                               " and --references)."),
    # where results go
    "format": dict(type=click.Choice(OUTPUT_FORMATS), default=defaults.OUTPUT_FORMAT, show_default=True,
                   help="Output format."),
    "output": dict(type=click.Path(dir_okay=False), help="Write to this file (atomically) instead of the terminal."),
    "plot": dict(type=click.Path(dir_okay=False), help="Also draw the result to this .png or .svg file."),
    "write_scores": dict(type=click.Path(dir_okay=False),
                         help="Write the scores (CSV, TSV, JSONL or Parquet by extension)."),
    # what is computed
    "level": dict(type=click.Choice(LEVEL_CHOICES), default=defaults.LEVEL, show_default=True,
                  help="Level of the correlations."),
    "coefficient": dict(type=click.Choice(COEFFICIENT_CHOICES), default=defaults.COEFFICIENT, show_default=True,
                        help="Coefficient of the correlations."),
    "confidence_level": dict(type=float, default=defaults.CONFIDENCE_LEVEL, show_default=True,
                             help="Confidence level of the intervals."),
    "alpha": dict(type=float, default=defaults.ALPHA, show_default=True, help="Significance level."),
    "test": dict(help="Test of each pair."),
    "method": dict(type=click.Choice(RESAMPLING_METHODS), default=defaults.RESAMPLING_METHOD, show_default=True,
                   help="Which cells are resampled / swapped together."),
    "alternative": dict(type=click.Choice(ALTERNATIVES), default=defaults.ALTERNATIVE, show_default=True,
                        help="Alternative hypothesis of the test."),
    "correction": dict(type=click.Choice(CORRECTIONS), default=defaults.CORRECTION, show_default=True,
                       help="Multiple-comparison correction of the p-values."),
    "family": dict(type=click.Choice(FAMILIES), default=defaults.FAMILY, show_default=True,
                   help="The p-values corrected together: each row metric's comparisons, or the whole matrix."),
    "full_test_set": dict(is_flag=True,
                          help="Average each metric over all its inputs, the human over the judged ones."),
    "explain": dict(is_flag=True,
                    help="Also print (to stderr) which fast kernel of the route table computes each metric pair, and"
                         " why (docs/statistics.md, Which kernel computes a pair)."),
    "analysis": dict(help="The analysis to run."),
    "sizes": dict(type=NumberList(int), help="Sizes, comma-separated."),
    "measure": dict(help="The metric's score used."),
    "threshold": dict(type=float, help="A threshold."),
    "full_text": dict(default=defaults.FULL_TEXT_CONDITION, show_default=True,
                      help="The condition of the full-text judgments."),
    "metric_option": dict(multiple=True, metavar="METRIC.KEY=VALUE",
                          help="An option of one metric, e.g. rouge.stem=true or rouge.n=4 (repeatable; JSON"
                               " values)."),
    # how it is computed
    "n_resamples": dict(type=int, default=defaults.N_RESAMPLES, show_default=True,
                        help="Bootstrap / permutation resamples."),
    "n_repetitions": dict(type=int, help="Repetitions."),
    "seed": dict(type=int, default=defaults.SEED, show_default=True, help="Seed of every resampling."),
    "tie_tolerance": dict(type=click.FloatRange(0.0, 1e-3), default=defaults.TIE_TOLERANCE, show_default=True,
                          help="Scores a, b tie in rank statistics when |a - b| <= this * the spread of their vector"
                               " (or 2^-46 * its largest magnitude); 0 = exact (as scipy)."),
    "progress": dict(flag="--progress/--no-progress", default=None,
                     help="Progress bar with a count and ETA on stderr (default: when stderr is a terminal)."),
    "workers": dict(type=int, default=1, show_default=True,
                    help="Local worker processes (same results for the same seed)."),
    "scheduler": dict(help="Address of a running Dask scheduler, e.g. tcp://host:8786 (needs metaeval[dask]); same"
                           " results as a serial run for the same seed."),
    "task": dict(help="The task."),
    "ties": dict(help="How ties are counted."),
    "html": dict(type=click.Path(dir_okay=False), help="Also write an HTML page."),
    # judges (`metaeval judge`) and error spans (`metaeval spans`)
    "comparisons": dict(type=click.Path(dir_okay=False),
                        help="A comparison file: one row per comparison (CSV, TSV, JSON Lines, JSON array,"
                             " Parquet)."),
    **{f"{role}_column": dict(metavar="COLUMN", help=f"The comparison file's column of the {role.replace('_', ' ')}"
                                                     " role.")
       for role in ("first", "second", "judge", "verdict", "repeat", "first_length", "second_length")},
    "annotators": dict(is_flag=True,
                       help="Each annotator of a --scorer with several annotators per cell is a judge of its own"
                            " (named SCORER/1, SCORER/2, ...)."),
    "judge": dict(multiple=True, help="A judge (repeatable; default: every judge)."),
    "resampling": dict(type=click.Choice(JUDGE_RESAMPLING), default=defaults.JUDGE_RESAMPLING, show_default=True,
                       help="What the bootstrap resamples (inputs: their comparisons move together)."),
    "regularization": dict(type=float, default=0.0, show_default=True,
                           help="Gaussian prior penalty on the scores (0 = maximum likelihood; set it when the MLE"
                                " diverges)."),
    "n_permutations": dict(type=int, default=defaults.N_RESAMPLES, show_default=True,
                           help="Sign flips of the judge-vs-judge tests."),
    "epsilon": dict(type=float, default=defaults.ALT_TEST_EPSILON, show_default=True,
                    help="Cost-benefit allowance (0.2 for experts, 0.1 for crowd workers)."),
}
"""Each option's one declaration: parameter name -> the keywords of :func:`click.option`."""


def flag_of(name: str) -> str:
    """``confidence_level`` -> ``--confidence-level``."""
    return "--" + name.replace("_", "-")


def option(name: str, **changes: Any) -> Callable:
    """The option ``name`` of :data:`OPTIONS` (``changes`` replace its keywords for this command): flag
    ``--name-with-dashes``, parameter ``name``. A long choice list is named in the help, not after the
    flag, so that ``--help`` fits 80 columns."""
    return declare(name, {**OPTIONS[name], **changes})


def declare(name: str, spec: dict[str, Any]) -> Callable:
    """:func:`click.option` of flag ``--name-with-dashes`` and parameter ``name`` with the keywords ``spec``
    (a long choice list named in the help)."""
    spec = dict(spec)
    flag = spec.pop("flag", flag_of(name))
    kind = spec.get("type")
    if isinstance(kind, click.Choice) and "metavar" not in spec:
        listed = "[" + "|".join(map(str, kind.choices)) + "]"
        if len(listed) > CHOICES_INLINE:
            spec["metavar"] = name.upper()
            spec["help"] = (spec.get("help") or "").rstrip() + f" One of: {', '.join(map(str, kind.choices))}."
    return click.option(flag, name, **spec)


def options(*names: str) -> Callable:
    """The options ``names`` of :data:`OPTIONS`, unchanged, in this order."""
    def decorate(command: Callable) -> Callable:
        for name in reversed(names):
            command = option(name)(command)
        return command
    return decorate


class Group(click.Group):
    """A command group whose list of subcommands shows each one's whole first sentence, wrapped at words
    (click shortens it to the width left beside the names)."""

    context_class = Context

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary(self.get_command(ctx, name))) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def summary(command: click.Command) -> str:
    """The first sentence of ``command``'s help, whole (the line of a command list)."""
    return command.get_short_help_str(limit=10_000)


def group(**kwargs: Any) -> Callable:
    """:func:`click.group` with :class:`Group`."""
    return click.group(cls=Group, **kwargs)


# -- groups of options ---------------------------------------------------------------------------------

READING = ("system_column", "input_column", "annotator_column", "human_column", "where", "layout", "file_format",
           "rename", "rename_system", "allow_unmatched")
"""The options saying how score files are read (each for every file or, ``FILE=VALUE``, for one)."""
SOURCE = ("dataset", "dataset_option", "scores", *READING, "human", "metric", "system", "exclude_system",
          "aggregation")
"""The options naming the scores a command meta-evaluates."""


def source_options(command: Callable | None = None, *, names: tuple[str, ...] = SOURCE) -> Callable:
    """The :data:`SOURCE` options (or those of ``names``), given to the command as one ``source``
    (:class:`metaeval.cli.source.Source`); a data error then names the one score file it came from."""

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            from .source import Reading, Source, located

            given = {name: kwargs.pop(name) for name in names}
            reading = Reading.of({k: v for k, v in given.items() if k in (*READING, "aggregation")})
            source = Source(**{k: v for k, v in given.items() if k not in (*READING, "aggregation")}, reading=reading)
            with located(source.origin):
                return command(*args, source=source, **kwargs)

        return options(*names)(wrapper)

    return decorate if command is None else decorate(command)


def reading_options(aggregation: bool = True) -> Callable:
    """The :data:`READING` options (and ``--aggregation``), given to the command as one ``reading``
    (:class:`metaeval.cli.source.Reading`), for a command that reads its score files itself."""
    names = (*READING, "aggregation") if aggregation else READING

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def wrapper(*args, **kwargs):
            from .source import Reading

            return command(*args, reading=Reading.of({name: kwargs.pop(name) for name in names}), **kwargs)

        return options(*names)(wrapper)
    return decorate


def output_options(command: Callable) -> Callable:
    """--format (every output format) and --output."""
    return options("format", "output")(command)


def seed_option(command: Callable) -> Callable:
    return option("seed")(command)


def resamples_option(command: Callable) -> Callable:
    return option("n_resamples")(command)


def tie_tolerance_option(command: Callable) -> Callable:
    """--tie-tolerance: passed to the command as ``tie_tolerance``, which passes it to every library call
    whose result it changes."""
    return option("tie_tolerance")(command)


def corpus_options(command: Callable) -> Callable:
    """--corpus-metric / --candidates / --references, passed to the command as ``corpus_texts``."""
    from ..vocabulary import CORPUS_METRICS

    @functools.wraps(command)
    def wrapper(*args, corpus_metric=(), candidates=None, references=None, **kwargs):
        return command(*args, corpus_texts=(corpus_metric, candidates, references), **kwargs)

    for decorator in reversed((option("corpus_metric", type=click.Choice(CORPUS_METRICS)), option("candidates"),
                               option("references"))):
        wrapper = decorator(wrapper)
    return wrapper


# -- printing ---------------------------------------------------------------------------------------------

def say(text: str, *, err: bool = False) -> None:
    """Print one message line that may hold user strings (file, metric names), made terminal-safe."""
    from ..report.escape import safe_text

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
        from ..runtime.files import write_text_atomic

        write_text_atomic(Path(output), text)
    else:
        click.echo(text, nl=False)
