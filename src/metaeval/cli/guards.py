"""Checks every command passes before it runs (applied to each command by :func:`guarded`, which the group in
:mod:`metaeval.cli.main` calls when it loads a command).

- **An option that takes one value is given once.** Click keeps the last of repeated values silently
  (``compare --level system --level summary`` compared the summary level only); a repeated single-valued
  option is a user error naming the option and its values.
- **No command overwrites its own input.** Each file the command will write (``--output``,
  ``--write-scores``, and the files written beside them: the score file's signatures, the report's
  results.json, ...) is compared with every existing regular file named by another option or argument
  (``--scores``, ``--candidates LP=PATH``, ``--cache``, ...). Same path or same file (a hard or symbolic
  link) is a user error.

Both exit with code 2 and one line, before anything is read or written.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from ..errors import ParameterError

OUTPUT_OPTIONS = {"output": "--output", "write_scores": "--write-scores", "plot": "--plot"}
"""Parameter name -> flag of every option naming a file (or directory) a command writes."""

REPORT_FILES = ("results.json", "correlations.csv", "comparison.csv")


def _written(command: str, name: str, value: str) -> list[Path]:
    """The files a command writes for output option ``name`` = ``value``."""
    path = Path(value)
    if command == "report" and name == "output":
        from ..report.build import report_paths

        directory, page = report_paths(path)
        return [page, *(directory / f for f in REPORT_FILES)]
    if command == "score" and name == "output":
        from ..data.sidecar import sidecar_path

        return [path, sidecar_path(path)]
    return [path]


def _named_files(flag: str, value) -> Iterator[tuple[str, str]]:
    """(flag, path) of every existing regular file a parameter value names (``PATH`` or ``KEY=PATH``)."""
    values = value if isinstance(value, (tuple, list)) else (value,)
    for item in values:
        if not isinstance(item, str) or not item:
            continue
        for candidate in (item, item.split("=", 1)[-1]):
            if os.path.isfile(candidate):
                yield flag, candidate
                break


def overwritten_input(command: str, params: dict, flags: dict[str, str] | None = None) -> str | None:
    """The message for the first output that is one of the inputs, or None (``flags``: parameter name ->
    how the command line spells it)."""
    flags = flags or {}
    outputs = [(flags.get(name, OUTPUT_OPTIONS[name]), value, _written(command, name, value))
               for name, value in params.items() if name in OUTPUT_OPTIONS and isinstance(value, str) and value]
    if not outputs:
        return None
    inputs = [pair for name, value in params.items() if name not in OUTPUT_OPTIONS
              for pair in _named_files(flags.get(name, "--" + name.replace("_", "-")), value)]
    for out_flag, out_value, files in outputs:
        for written in files:
            if not written.exists():
                continue
            for in_flag, in_path in inputs:
                if os.path.samefile(written, in_path):
                    what = "is" if str(written) == out_value else f"would write {str(written)!r},"
                    return (f"{out_flag} {out_value!r} {what} the same file as {in_flag} {in_path!r}; "
                            "writing it would destroy the input: choose another output path")
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

    @functools.wraps(callback)
    def checked(*args, **kwargs):
        message = overwritten_input(name, kwargs, flags)
        if message is not None:
            raise ParameterError(message)
        return callback(*args, **kwargs)

    checked._guarded = True
    command.callback = checked
    return command
