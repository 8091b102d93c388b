"""Exceptions and warnings raised by metaeval.

Every message follows one template: "`param` must be <constraint>; got <value!r>." and is built as one
string. Errors about user files name the file, the row and the column (see :class:`InputFileError`).
The CLI turns every :class:`MetaevalError` into a one-line message and exit code 2.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class MetaevalError(ValueError):
    """Base class of every error metaeval raises for a user mistake."""


class ParameterError(MetaevalError):
    """An argument has a wrong value (a choice not offered, a number out of range, ...)."""


class ScoreSetError(MetaevalError):
    """A ScoreSet cannot answer the request (unknown scorer or label, too few systems, ...)."""


class DegenerateDataError(MetaevalError):
    """The data make the requested statistic meaningless (e.g. a metric with zero variance)."""


class InputFileError(MetaevalError):
    """A user file is malformed. The message names the file, the row and the column.

    ``row`` counts data rows from 1 as a text editor shows lines (the header of a CSV is line 1),
    ``column`` is the column name or JSON field.
    """

    def __init__(self, path: Any, message: str, *, row: int | None = None, column: str | None = None):
        self.path = str(path)
        self.row = row
        self.column = column
        self.detail = message
        where = self.path
        if row is not None:
            where += f", row {row}"
        if column is not None:
            where += f", column {column!r}"
        super().__init__(f"{where}: {message}")


class MissingDependencyError(MetaevalError, ImportError):
    """An optional package that a feature needs is not installed.

    The one message template: "<purpose> needs the Python package <package>; install it with
    `pip install <spec>`." (built by :func:`require_module`). Missing *data* (a model directory, the
    WordNet database) is :class:`metaeval.metrics.MetricResourceError` instead.
    """


def require_module(name: str, *, purpose: str, install: str | None = None) -> Any:
    """Import and return module ``name``, or raise :class:`MissingDependencyError` saying how to install it.

    ``purpose`` says what needs it ("running on a Dask scheduler"); ``install`` is the pip requirement
    to suggest (default: the top-level package name).
    """
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        package = name.split(".")[0]
        raise MissingDependencyError(
            f"{purpose} needs the Python package {package!r}; install it with `pip install {install or package}`."
        ) from None


class MetaevalWarning(UserWarning):
    """Base class of metaeval's warnings."""


class DegenerateWarning(MetaevalWarning):
    """Something was undefined and skipped (constant input, all resamples undefined, few systems, ...)."""


class SignificanceWarning(MetaevalWarning):
    """No comparison can be significant: too few resamples for the multiple-comparison correction."""


class DataWarning(MetaevalWarning):
    """A note about the user's data: columns ignored, cells or labels that a join did not match."""


class PaperProcedureWarning(MetaevalWarning):
    """A reproduction option copies a published procedure that metaeval does not recommend (biased, duplicated)."""


def check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``; raise :class:`ParameterError` otherwise."""
    choices = tuple(choices)
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"`{name}` must be one of {listed}; got {value!r}.")
    return value


def check_int(name: str, value: Any, *, minimum: int) -> int:
    """Return ``value`` as int if it is an integer >= ``minimum``; raise :class:`ParameterError` otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int,)) and not _is_integer_like(value):
        raise ParameterError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    if int(value) < minimum:
        raise ParameterError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_probability(name: str, value: Any, *, open_interval: bool = True) -> float:
    """Return ``value`` as float if it lies in (0, 1); raise :class:`ParameterError` otherwise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"`{name}` must be a number in (0, 1); got {value!r}.") from None
    if not (0.0 < v < 1.0):
        raise ParameterError(f"`{name}` must be a number in (0, 1); got {value!r}.")
    return v


def _is_integer_like(value: Any) -> bool:
    import numpy as np

    return isinstance(value, np.integer)
