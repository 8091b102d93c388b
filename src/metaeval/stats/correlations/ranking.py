"""Kendall's tau read as a ranking-error rate: how often a metric orders two systems wrongly."""
from __future__ import annotations

import numpy as np

from metaeval.errors import ParameterError

__all__ = ["ranking_error_rate", "ranking_error_interval"]


def ranking_error_rate(tau):
    """Probability that a random pair of systems is ordered differently by the metric and the humans.

    Parameters
    ----------
    tau : float or array_like
        Kendall correlation(s) in [-1, 1] (NaN gives NaN).

    Returns
    -------
    float or numpy.ndarray
        ``(1 - tau) / 2``, elementwise.

    Raises
    ------
    ParameterError
        If a value lies outside [-1, 1].

    Notes
    -----
    Without ties, ``tau = (C - D) / P`` with ``C + D = P`` pairs, so ``(1 - tau) / 2 = D / P``: the
    fraction of system pairs the metric orders the other way from the humans. With ties the
    identity is exact for tau-a if each pair tied in either ranking counts as half an error,
    and approximate for tau-b / tau-c. The map is decreasing, so an interval ``(low, high)`` for tau
    becomes ``((1 - high) / 2, (1 - low) / 2)``: use :func:`ranking_error_interval`.

    References
    ----------
    Kendall, M. G. (1938). A new measure of rank correlation. Biometrika 30(1/2), 81-93.
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. Transactions of the ACL 9, 1132-1146 (intervals read as ranking errors).

    Examples
    --------
    >>> float(ranking_error_rate(0.6))
    0.2
    """
    tau = _tau_iv(tau, "tau")
    return ((1.0 - tau) / 2.0)[()]


def ranking_error_interval(low, high):
    """Map a confidence interval ``(low, high)`` of Kendall's tau to one of the ranking-error rate.

    Returns
    -------
    (low, high) : tuple
        ``((1 - high) / 2, (1 - low) / 2)``: the ends swap because the map is decreasing.

    Examples
    --------
    >>> [float(v) for v in ranking_error_interval(0.2, 0.6)]
    [0.2, 0.4]
    """
    low = _tau_iv(low, "low")
    high = _tau_iv(high, "high")
    return ((1.0 - high) / 2.0)[()], ((1.0 - low) / 2.0)[()]


def _tau_iv(tau, name):
    tau = np.asarray(tau, dtype=np.float64)
    bad = np.abs(tau) > 1.0
    if bad.any():
        raise ParameterError(f"`{name}` must be in [-1, 1]; got {float(tau[bad].flat[0])!r}.")
    return tau
