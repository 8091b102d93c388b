"""Progress bars of the CLI: one rich.progress bar on stderr with a count (``3/18``), elapsed time and ETA.

The library never draws: its long functions (:func:`metaeval.correlation_table`,
:func:`metaeval.compare_metrics`, :func:`metaeval.ranking_stability`, :func:`metaeval.delta_correlations`,
the simulations, :func:`metaeval.build_report`, :func:`metaeval.score`) report through the one protocol of
:mod:`metaeval.runtime.progress`: ``progress()`` after each unit of work (a table cell, a metric, a chunk of
repetitions), with ``step=`` and ``total=`` where a function has several steps. The commands draw those
reports with the runtime's one drawer (:class:`~metaeval.runtime.progress.RichProgress`), from
:func:`progress_bar`::

    with progress_bar(enabled) as bar:
        table = correlation_table(..., progress=bar.task("correlations", total=18))

Decision: bars are on when stderr is a terminal, off otherwise (pipes, files, CI logs) and with
``--no-progress`` (:func:`progress_option`, on every command that can run longer than about 2 s). The bar is
transient: it disappears when the command is done, so what remains on the terminal is the result. Every
console comes from :func:`metaeval.report.escape.console`; descriptions are printed without markup.
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

from ..report.escape import console
from ..runtime.progress import RichProgress, step

__all__ = ["progress_bar", "progress_enabled", "progress_option"]

_KEY = "metaeval.progress"


def progress_option(command: Callable) -> Callable:
    """--progress/--no-progress, kept in the click context (read by :func:`progress_enabled`)."""

    @functools.wraps(command)
    def wrapper(*args, progress=None, **kwargs):
        click.get_current_context().meta[_KEY] = progress
        return command(*args, **kwargs)

    from .common import option

    return option("progress")(wrapper)


def progress_enabled(explicit: bool | None = None) -> bool:
    """The command's ``--progress/--no-progress``, or whether stderr is a terminal."""
    if explicit is None:
        context = click.get_current_context(silent=True)
        explicit = context.meta.get(_KEY) if context is not None else None
    if explicit is None:
        return sys.stderr.isatty()
    return bool(explicit)


class _Bar:
    """The command's :class:`~metaeval.runtime.progress.RichProgress` (the one drawer), or no bar;
    ``task()`` returns the callback of one named step."""

    def __init__(self, progress: Any):
        self.progress = progress

    def task(self, description: str, total: int | None = None) -> Callable[..., None] | None:
        return step(self.progress, description, total)

    @property
    def callback(self) -> Any:
        """The protocol callable (for the functions that report several steps: :func:`metaeval.build_report`,
        scoring), or None."""
        return self.progress

    rich = callback  # the name the report command used


class progress_bar:  # noqa: N801 - used as a context manager like open()
    """A context manager yielding a :class:`_Bar`; no bar (callbacks are None) when not ``enabled``."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = progress_enabled(enabled)
        self.progress = None

    def __enter__(self) -> _Bar:
        if not self.enabled:
            return _Bar(None)
        self.progress = RichProgress(transient=True, console=console(stderr=True))
        self.progress.__enter__()
        return _Bar(self.progress)

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)
