"""Fisher-z confidence intervals for Pearson, Spearman and Kendall correlations."""
from __future__ import annotations

import numpy as np
from scipy import special

from metaeval import defaults
from metaeval.errors import ParameterError, check_choice, check_probability
from metaeval.stats.correlations.coefficients import canonical_coefficient

__all__ = ["FISHER_COEFFICIENTS", "fisher_interval"]

FISHER_COEFFICIENTS = ("pearson", "spearman", "kendall-a", "kendall-b", "kendall-c")
"""Coefficients with a Fisher-z interval."""

KENDALL_VARIANCE = 0.437
"""Bonett & Wright's (2000) variance constant for Kendall's tau: ``c^2 = 0.437``."""


def fisher_interval(r, n, *, coefficient: str, confidence_level: float = defaults.CONFIDENCE_LEVEL):
    """Fisher-z confidence interval of a correlation coefficient.

    Parameters
    ----------
    r : float or array_like
        Observed correlation(s), in [-1, 1]; NaN gives a NaN interval.
    n : int or array_like
        Number of pairs the correlation was computed on (systems at system level, cells at global level;
        broadcast against ``r``).
    coefficient : str
        ``'pearson'``, ``'spearman'`` or a Kendall variant (``'kendall'``, ``'kendall-a'``, ``'kendall-b'``,
        ``'kendall-c'``).
    confidence_level : float, optional
        Coverage of the interval, in (0, 1). Default 0.95.

    Returns
    -------
    (low, high) : tuple of float or numpy.ndarray
        The interval ends, of the broadcast shape of ``r`` and ``n``; NaN where ``n <= b`` (see Notes).

    Raises
    ------
    ParameterError
        For a coefficient without a Fisher interval, ``|r| > 1`` or a confidence level outside (0, 1).

    Notes
    -----
    ``tanh(arctanh(r) -+ z_{1 - alpha/2} * c / sqrt(n - b))`` with ``alpha = 1 - confidence_level`` and

    ============  =====  ======================
    coefficient   b      c
    ============  =====  ======================
    pearson       3      1
    spearman      3      ``sqrt(1 + r^2 / 2)``
    kendall-*     4      ``sqrt(0.437)``
    ============  =====  ======================

    The approximation assumes bivariate normal data (Kendall's and Spearman's constants were derived
    for tau-a and rho without ties). At summary level, where the statistic is a mean of per-input
    correlations and ``n`` is the number of systems, the interval is a rough approximation: Deutsch et
    al. (2021) found it much wider than bootstrap intervals. An ``|r| = 1`` gives the degenerate
    interval ``(r, r)``.

    References
    ----------
    Fisher, R. A. (1921). On the "probable error" of a coefficient of correlation deduced from a small
    sample. Metron 1, 3-32.
    Bonett, D. G. and Wright, T. A. (2000). Sample size requirements for estimating Pearson, Kendall and
    Spearman correlations. Psychometrika 65(1), 23-28.
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. Transactions of the ACL 9, 1132-1146.

    Examples
    --------
    >>> low, high = fisher_interval(0.5, 20, coefficient="pearson")
    >>> round(float(low), 4), round(float(high), 4)
    (0.0738, 0.7718)
    """
    coefficient = check_choice("coefficient", canonical_coefficient(coefficient), FISHER_COEFFICIENTS)
    confidence_level = check_probability("confidence_level", confidence_level)
    r = np.asarray(r, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    outside = np.abs(r) > 1.0
    if outside.any():
        raise ParameterError(f"`r` must be in [-1, 1]; got {float(r[outside].flat[0])!r}.")
    if coefficient == "pearson":
        b, c = 3.0, np.ones_like(r)
    elif coefficient == "spearman":
        b, c = 3.0, np.sqrt(1.0 + r * r / 2.0)
    else:
        b, c = 4.0, np.full_like(r, np.sqrt(KENDALL_VARIANCE))
    z_crit = -special.ndtri((1.0 - confidence_level) / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = z_crit * c / np.sqrt(np.where(n > b, n - b, np.nan))
        center = np.arctanh(r)
        low, high = np.tanh(center - half), np.tanh(center + half)
    bad = np.isnan(half) | np.isnan(r)
    low, high = np.where(bad, np.nan, low), np.where(bad, np.nan, high)
    return low[()], high[()]
