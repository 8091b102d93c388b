"""The tie rule of every rank statistic in metaeval, in one place.

Two values ``a`` and ``b`` are tied when ``|a - b| <= rtol * max(|a|, |b|)``. The default ``rtol`` is
:data:`TIE_RTOL` = 1e-9: averaged Likert scores and metric scores that are equal in exact arithmetic can
differ in the last bits depending on the summation order (PITFALLS, "Resampling"), and must still be
ties for Kendall's tau, pairwise accuracy and the pair signs of the analyses. ``rtol = 0`` is exact
comparison, as scipy does; reproducing a table computed with scipy to the last digit needs it.

The public functions that rank values take ``tie_tolerance=`` and evaluate under
:func:`tie_tolerance`; everything below them (the generic coefficients of
:mod:`metaeval.stats.coefficients`, the kernels' tie ranks of :mod:`metaeval.stats.kernels.ranks`, the
analyses' pair signs) calls :func:`are_tied` or :func:`current_rtol`, so one setting reaches every code
path of one call. The setting is a :mod:`contextvars` variable: it is local to the thread (and asyncio
task) that set it, and is passed explicitly to worker processes by the functions that start them.
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError

__all__ = ["TIE_RTOL", "are_tied", "check_tie_tolerance", "current_rtol", "tie_tolerance"]

TIE_RTOL = defaults.TIE_TOLERANCE
"""Default relative tolerance under which two values are tied."""

_RTOL: contextvars.ContextVar[float] = contextvars.ContextVar("metaeval_tie_rtol", default=TIE_RTOL)


def check_tie_tolerance(value: Any) -> float:
    """The one validator of ``tie_tolerance``: a finite number in [0, 1e-3]."""
    try:
        rtol = float(value)
    except (TypeError, ValueError):
        rtol = float("nan")
    if isinstance(value, (bool, np.bool_)) or not 0.0 <= rtol <= 1e-3:
        raise ParameterError(f"`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got {value!r}.")
    return rtol


def current_rtol() -> float:
    """The relative tie tolerance in effect (:data:`TIE_RTOL` unless inside :func:`tie_tolerance`)."""
    return _RTOL.get()


@contextlib.contextmanager
def tie_tolerance(rtol: float) -> Iterator[float]:
    """Evaluate the enclosed code with the tie rule ``|a - b| <= rtol * max(|a|, |b|)``.

    ``rtol`` is validated by :func:`check_tie_tolerance`; the previous rule is restored on exit.
    """
    token = _RTOL.set(check_tie_tolerance(rtol))
    try:
        yield current_rtol()
    finally:
        _RTOL.reset(token)


def are_tied(a, b) -> np.ndarray:
    """Elementwise: ``|a - b| <= rtol * max(|a|, |b|)`` with the current rtol (False where either is NaN)."""
    rtol = _RTOL.get()
    with np.errstate(invalid="ignore"):
        if rtol == 0.0:
            return np.asarray(a) == np.asarray(b)
        return np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))
