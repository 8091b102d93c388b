"""Checks every command passes before it runs (applied to each command by :func:`guarded`, which the group in
:mod:`metaeval.cli.main` calls when it loads a command).

- **An option that takes one value is given once.** Click keeps the last of repeated values silently
  (``compare --level system --level summary`` compared the summary level only); a repeated single-valued
  option is a user error naming the option and its values.
- **No command overwrites its own input.** Each file the command will write (``--output``,
  ``--write-scores``, and the files written beside them: the score file's signatures, the report's
  results.json, ...) is compared with every existing regular file named by another option or argument
  (``--scores``, ``--candidates LP=PATH``, ``--cache``, ...). Same path or same file (a hard or symbolic
  link) is a user error, and so is an output that would replace an existing file inside a directory named
  as an input (``--mt-metrics-eval D --output D/human-scores/x.tsv``: a reader of a directory reads files
  it does not name on the command line). A new file inside an input directory is allowed.
- **Two outputs never share a path.** ``--html x --output x``, ``--plot`` = ``--output`` or ``--plot`` =
  ``--delta-plot`` (same path, or the same file through a link) would silently lose one of them.
- **No output replaces a directory.** The report's page and data files and ``score``'s file and sidecar
  must not be directories (the report's set would otherwise swap them away with their files).

- **No size-like option beyond its limit.** A count of repetitions, partitions, trials, bins, grid points,
  a batch size, a number of workers or of planned inputs beyond :func:`size_limit` is refused (without the
  check ``stability --n-repetitions 2000000000`` ran for days and ``gap --n-bins 1000000000`` was killed
  for memory).

All exit with code 2 and one line, before anything is read or written.

Then the command runs inside :func:`metaeval.runtime.output_sets.output_set`: its output files are written
together, as one set, when it returns (none if it fails), and a set a killed run left half-renamed in an
output's folder is restored first (:func:`~metaeval.runtime.output_sets.recover_outputs`), before the
command reads its input.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from .. import defaults
from ..errors import ParameterError

OUTPUT_OPTIONS = {"output": "--output", "write_scores": "--write-scores", "plot": "--plot", "html": "--html",
                  "delta_plot": "--delta-plot"}
"""Parameter name -> flag of every option naming a file (or directory) a command writes."""

SIZE_FACTOR = 1000
"""A count of simulations, bins or grid points may be at most this many times its default (for a
simulation, the Monte Carlo error is then about 32 times smaller): beyond, the run takes days or
exhausts the memory."""

SIZE_OPTIONS: dict[str, int | None] = {
    "n_repetitions": defaults.REPORT_REPETITIONS, "repetitions": defaults.REPORT_REPETITIONS,
    "n_partitions": defaults.PARTITION_REPEATS, "n_trials": defaults.SIMULATION_TRIALS,
    "grid_points": defaults.GAP_GRID_POINTS, "n_bins": defaults.GAP_BINS, "mean_bins": defaults.SAMPLE_MEAN_BINS,
    "std_bins": defaults.SAMPLE_STD_BINS, "batch_size": defaults.SCORING_BATCH_SIZE, "n_inputs": None,
    "workers": None, "n_permutations": defaults.N_RESAMPLES, "n_folds": 5,
    "consistency": defaults.MT_CONSISTENCY_RESAMPLES, "levels": defaults.MT_SENTINEL_LEVELS,
}
"""Parameter name -> the default its limit is a multiple of (when the command's own default is not an
integer); None: a limit of its own (:func:`size_limit`). ``n_resamples`` has its memory check
(``_validation.check_resample_memory``), sizes bounded by the data (``--sizes``, ``--n``, ``--inputs``) are
checked against the data."""

_SIMULATION_COUNTS = ("n_repetitions", "repetitions", "n_partitions", "n_trials")

MAX_PLANNED_INPUTS = 1_000_000
"""The most judged inputs ``plan --n-inputs`` simulates (each campaign holds systems x inputs scores)."""


def size_limit(name: str, default) -> int:
    """The largest value of size-like parameter ``name`` whose command default is ``default``."""
    if name == "workers":
        return max(64, 8 * (os.cpu_count() or 1))  # processes: a few per CPU at most
    if name == "n_inputs":
        return MAX_PLANNED_INPUTS
    base = default if isinstance(default, int) and not isinstance(default, bool) and default > 0 else SIZE_OPTIONS[name]
    return SIZE_FACTOR * base


def oversized(params: dict, flags: dict[str, str], command_defaults: dict) -> str | None:
    """The message for the first size-like parameter beyond its :func:`size_limit`, or None."""
    for name, value in params.items():
        if name not in SIZE_OPTIONS:
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        limit = size_limit(name, command_defaults.get(name))
        for item in values:
            if isinstance(item, (int, float)) and not isinstance(item, bool) and item > limit:
                flag = flags.get(name, "--" + name.replace("_", "-"))
                why = ("a few processes per CPU" if name == "workers" else
                       "each simulated campaign holds systems x inputs scores" if name == "n_inputs" else
                       f"{SIZE_FACTOR} times its default: the Monte Carlo error is then about 32 times smaller,"
                       " and a larger value takes days or exhausts the memory" if name in _SIMULATION_COUNTS else
                       f"{SIZE_FACTOR} times its default; a larger value exhausts the memory")
                return f"`{flag}` must be at most {limit:,} ({why}); got {int(item):,}."
    return None


def _written(command: str, name: str, value: str) -> list[Path]:
    """The files a command writes for output option ``name`` = ``value``."""
    path = Path(value)
    if command == "report" and name == "output":
        from ..report.build import DATA_FILES, report_paths

        directory, page = report_paths(path)
        return [page, *(directory / f for f in DATA_FILES)]
    if command == "score" and name == "output":
        from ..data.sidecar import sidecar_path

        return [path, sidecar_path(path)]
    return [path]


def _named_paths(flag: str, value, exists: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(flag, path) of every existing path passing ``exists`` that a parameter value names (``PATH`` or
    ``KEY=PATH``)."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    for item in values:
        if not isinstance(item, str) or not item:
            continue
        for candidate in (item, item.split("=", 1)[-1]):
            if exists(candidate):
                yield flag, candidate
                break


def _named_files(flag: str, value) -> Iterator[tuple[str, str]]:
    """(flag, path) of every existing regular file a parameter value names (``PATH`` or ``KEY=PATH``)."""
    return _named_paths(flag, value, os.path.isfile)


def _inside(path: Path, folder: str) -> bool:
    try:
        return path.resolve().is_relative_to(Path(folder).resolve())
    except (OSError, RuntimeError):
        return False


def _not_replaceable(command: str, name: str, written: Path) -> bool:
    """Whether ``written``, a file the report or ``score`` writes, is held by something no file replaces
    (a directory: the whole-set swap would have removed it with its files)."""
    return (command, name) in (("report", "output"), ("score", "output")) and written.is_dir()


def overwritten_input(command: str, params: dict, flags: dict[str, str] | None = None) -> str | None:
    """The message for the first output that is one of the inputs, or None (``flags``: parameter name ->
    how the command line spells it)."""
    flags = flags or {}
    outputs = [(name, flags.get(name, OUTPUT_OPTIONS[name]), value, _written(command, name, value))
               for name, value in params.items() if name in OUTPUT_OPTIONS and isinstance(value, str) and value]
    if not outputs:
        return None
    named = [(name, flags.get(name, "--" + name.replace("_", "-")), value) for name, value in params.items()
             if name not in OUTPUT_OPTIONS]
    inputs = [pair for _, flag, value in named for pair in _named_files(flag, value)]
    folders = [pair for _, flag, value in named for pair in _named_paths(flag, value, os.path.isdir)]
    for out_name, out_flag, out_value, files in outputs:
        for written in files:
            what = "is" if str(written) == out_value else f"would write {str(written)!r},"
            if _not_replaceable(command, out_name, written):
                where = "is a directory" if what == "is" else f"{what} which is a directory"
                return (f"{out_flag} {out_value!r} {where}; metaeval never replaces a directory with a file:"
                        " choose another output path")
            if not written.exists():
                continue
            for in_flag, in_path in inputs:
                if os.path.samefile(written, in_path):
                    return (f"{out_flag} {out_value!r} {what} the same file as {in_flag} {in_path!r}; "
                            "writing it would destroy the input: choose another output path")
            for in_flag, in_folder in folders:
                if _inside(written, in_folder):
                    return (f"{out_flag} {out_value!r} {what} an existing file inside the input directory"
                            f" {in_flag} {in_folder!r}; writing it could destroy an input: choose a path outside"
                            " that directory")
    return None


def output_paths(command: str, params: dict) -> list[Path]:
    """Every file the command will write for its output options (``params``: parameter name -> value)."""
    return [written for name, value in params.items() if name in OUTPUT_OPTIONS and isinstance(value, str) and value
            for written in _written(command, name, value)]


def _same_path(a: Path, b: Path) -> bool:
    if os.path.realpath(a.parent) == os.path.realpath(b.parent) and a.name == b.name:
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def shared_output(command: str, params: dict, flags: dict[str, str] | None = None) -> str | None:
    """The message for two outputs of one command at one path (one would be lost), or None."""
    flags = flags or {}
    seen: list[tuple[str, str, Path]] = []
    for name, value in params.items():
        if name not in OUTPUT_OPTIONS or not isinstance(value, str) or not value:
            continue
        flag = flags.get(name, OUTPUT_OPTIONS[name])
        for written in _written(command, name, value):
            for other_flag, other_value, other in seen:
                if other_flag != flag and _same_path(written, other):
                    what = "is" if written == Path(value) else f"would write {str(written)!r},"
                    return (f"{flag} {value!r} {what} the same file as {other_flag} {other_value!r}; one of the two"
                            " outputs would be lost: give each output its own path")
            seen.append((flag, value, written))
    return None


def repeated_option(command: click.Command, args: list[str]) -> str | None:
    """The message for the first option taking one value that ``args`` give more than once, or None."""
    takes: dict[str, tuple[click.Option, int]] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for opt in param.opts + param.secondary_opts:
                takes[opt] = (param, 0 if param.is_flag or param.count else param.nargs)
    seen: dict[str, list[str]] = {}
    position = 0
    while position < len(args):
        token = args[position]
        position += 1
        if token == "--":
            break
        name, _, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in takes:
            continue
        param, nargs = takes[name]
        if "=" in token and token.startswith("--"):
            value = inline
        else:
            value = " ".join(args[position:position + nargs])
            position += nargs
        if nargs == 0 or param.multiple:
            continue
        seen.setdefault(param.name, []).append(value)
        if len(seen[param.name]) > 1:
            flag = max(param.opts, key=len)
            values = ", ".join(repr(v) for v in seen[param.name])
            return (f"{flag} takes one value; got it {len(seen[param.name])} times ({values}): give it once"
                    " (run the command once per value to compare several)")
    return None


def guarded(command: click.Command, name: str) -> click.Command:
    """``command`` (and every subcommand of a group) with the checks of this module."""
    if isinstance(command, click.Group):
        for sub_name, sub in command.commands.items():
            guarded(sub, f"{name} {sub_name}")
        return command
    if not getattr(command, "_repeat_guarded", False):
        parse_args = command.parse_args

        def parse_checked(ctx: click.Context, args: list[str]) -> list[str]:
            message = repeated_option(command, list(args))
            if message is not None:
                raise ParameterError(message)
            return parse_args(ctx, args)

        command.parse_args = parse_checked
        command._repeat_guarded = True
    if command.callback is None or getattr(command.callback, "_guarded", False):
        return command
    callback: Callable = command.callback
    flags = {p.name: (max(p.opts, key=len) if isinstance(p, click.Option) else p.human_readable_name)
             for p in command.params}

    command_defaults = {p.name: p.default for p in command.params}

    @functools.wraps(callback)
    def checked(*args, **kwargs):
        message = (oversized(kwargs, flags, command_defaults) or shared_output(name, kwargs, flags)
                   or overwritten_input(name, kwargs, flags))
        if message is not None:
            raise ParameterError(message)
        from ..runtime.output_sets import output_set, recover_outputs

        recover_outputs(output_paths(name, kwargs))  # a set a killed run left: restored before any input is read
        with output_set():
            return callback(*args, **kwargs)

    checked._guarded = True
    command.callback = checked
    return command
