"""The one progress protocol: the library reports, a caller draws.

Every long function of the library takes ``progress=``, a callable (or None) that it calls as::

    progress()                                   # one more unit of work done (the common case)
    progress(n)                                  # n more units
    progress(0, step="correlations", total=12)   # a named step starts, with its number of units
    progress(1, step="correlations")             # one unit of that step
    progress(0, step="correlations", done=True)  # the step is finished (whatever its count)

A function with one stream of work (an analysis: a table cell, a metric, a chunk of repetitions) calls
``progress()`` alone; a function with several steps (the report, scoring several metrics) names them.
The callable never has to draw: the CLI draws its bars from these calls (:class:`RichProgress`), a caller
may log them, count them, or ignore them. :func:`step` is the helper the library uses for a named step.

:class:`RichProgress` is the one drawer: rich bars on stderr, one per step. ``progress=True`` in the
functions that offer it means a :class:`RichProgress`; the CLI uses it under ``--progress``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ProgressCallback", "RichProgress", "as_progress", "step"]

ProgressCallback = Callable[..., None]
"""``progress(units=1, *, step=None, total=None, done=False)`` (see the module docstring)."""


def step(progress: ProgressCallback | None, name: str, total: int | None = None) -> Callable[..., None] | None:
    """Announce step ``name`` with ``total`` units to ``progress``; return ``advance(units=1)`` for it (None
    without a callback)."""
    if progress is None:
        return None
    progress(0, step=name, total=total)
    return lambda units=1: progress(units, step=name)


def finish(progress: ProgressCallback | None, name: str) -> None:
    """Tell ``progress`` that step ``name`` is finished."""
    if progress is not None:
        progress(0, step=name, done=True)


class _RichAdapter:
    """The protocol on a ``rich.progress.Progress`` a caller already has (one task per step)."""

    def __init__(self, rich_progress: Any, description: str = "working"):
        self.rich = rich_progress
        self.description = description
        self.tasks: dict[str, Any] = {}

    def _task(self, name: str, total: int | None) -> Any:
        if name not in self.tasks:  # a step name may hold a user's metric name: printable characters only
            shown = "".join(ch if ch.isprintable() else "?" for ch in str(name))
            self.tasks[name] = self.rich.add_task(shown, total=total)
        elif total is not None:
            self.rich.update(self.tasks[name], total=total)
        return self.tasks[name]

    def __call__(self, units: int = 1, *, step: str | None = None, total: int | None = None,
                 done: bool = False) -> None:
        task = self._task(step or self.description, total)
        if done:
            current = self.rich.tasks[[t.id for t in self.rich.tasks].index(task)]
            finished = current.total if current.total is not None else max(current.completed, 1)
            self.rich.update(task, total=finished, completed=finished)
        elif units:
            self.rich.advance(task, units)


def as_progress(progress: Any, description: str = "working") -> ProgressCallback | None:
    """``progress`` as a protocol callable: None stays None, a callable stays itself, and a
    ``rich.progress.Progress`` (what :func:`metaeval.build_report` took before) is wrapped."""
    if progress is None or progress is False:
        return None
    if progress is True:
        return RichProgress()
    if hasattr(progress, "add_task") and hasattr(progress, "advance"):
        return _RichAdapter(progress, description)
    if callable(progress):
        return progress
    from ..errors import ParameterError

    raise ParameterError(f"`progress` must be None, a callable or a rich Progress; got {progress!r}.")


class RichProgress(_RichAdapter):
    """The drawer: rich bars on stderr (a count, elapsed time and ETA per step), as a protocol callable and
    a context manager. Started on its first call, stopped by :meth:`close` (or leaving the ``with`` block);
    ``transient`` bars disappear when stopped; ``console`` (default: a rich Console on stderr) is where they
    are drawn (the CLI passes its markup-free console)."""

    def __init__(self, *, transient: bool = True, description: str = "working", console: Any = None):
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        stream = console if console is not None else Console(stderr=True)
        super().__init__(Progress(
            SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(bar_width=24),
            MofNCompleteColumn(), TextColumn("elapsed"), TimeElapsedColumn(), TextColumn("ETA"),
            TimeRemainingColumn(), console=stream, transient=transient, refresh_per_second=8,
        ), description)
        self.started = False

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if not self.started:
            self.rich.start()
            self.started = True
        super().__call__(*args, **kwargs)

    def close(self) -> None:
        if self.started:
            self.rich.stop()
            self.started = False

    def __enter__(self) -> "RichProgress":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
