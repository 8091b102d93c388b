"""Williams' test for the difference between two dependent correlations sharing one variable."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.vocabulary import ALTERNATIVES, check_alternative

__all__ = ["ALTERNATIVES", "WilliamsResult", "williams_test"]

"""Alternative hypotheses, as everywhere in metaeval."""

ArrayOrFloat = Union[float, np.ndarray]


@dataclass(frozen=True)
class WilliamsResult:
    """Result of :func:`williams_test` (floats, or arrays of the broadcast shape).

    Attributes
    ----------
    statistic : float or numpy.ndarray
        Williams' t; positive when ``r12 > r13``.
    df : float or numpy.ndarray
        Degrees of freedom of the t distribution, ``n - 3``.
    pvalue : float or numpy.ndarray
        p-value for the chosen alternative (NaN where the statistic is undefined).
    """

    statistic: ArrayOrFloat
    df: ArrayOrFloat
    pvalue: ArrayOrFloat


def williams_test(r12, r13, r23, n, *, alternative: str = "two-sided") -> WilliamsResult:
    """Williams' t-test of ``rho(X, Z) = rho(Y, Z)`` for two metrics X, Y and the human scores Z.

    Parameters
    ----------
    r12 : float or array_like
        Correlation between metric X and the human scores Z.
    r13 : float or array_like
        Correlation between metric Y and the human scores Z.
    r23 : float or array_like
        Correlation between the two metrics X and Y.
    n : int or array_like
        Number of items the correlations were computed on (e.g. systems at system level); at least 4.
    alternative : {'two-sided', 'greater', 'less'}, optional
        ``'greater'``: ``rho(X, Z) > rho(Y, Z)``; ``'less'``: ``rho(X, Z) < rho(Y, Z)``. Default
        ``'two-sided'``.

    Returns
    -------
    WilliamsResult
        ``statistic`` (t), ``df`` (``n - 3``) and ``pvalue``; floats for scalar input.

    Raises
    ------
    ParameterError
        For a correlation outside [-1, 1], ``n < 4`` or an unknown alternative.

    Notes
    -----
    With ``K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23`` (the determinant of the correlation matrix),

    ``t = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1) / (n - 3) + (r12 + r13)^2 / 4 (1 - r23)^3)``

    follows Student's t with ``n - 3`` degrees of freedom under the null hypothesis (Williams 1959,
    in the form of Steiger 1980, eq. 7, used by Graham & Baldwin 2014 for MT metrics). The test assumes
    bivariate normal data and Pearson correlations.

    The correlations are used **signed**. The WMT scripts (``r.test`` of R's psych package) and
    nlpstats take absolute values first, so a metric with r = -0.9 "beats" one with r = 0.8; here it
    does not. For positive correlations both give the same p-values. The statistic is NaN when the
    three correlations are inconsistent (negative denominator) or the denominator is 0, except for two
    metrics that are perfectly linearly related (``r23 = 1`` and ``r12 = r13`` up to ``100 eps``, e.g.
    identical metrics): there t = 0 and p = 1 for every alternative, as the permutation and bootstrap
    tests give for identical metrics. Swapping X and Y negates t exactly and exchanges the 'greater'
    and 'less' p-values.

    References
    ----------
    Williams, E. J. (1959). The comparison of regression variables. Journal of the Royal Statistical
    Society, Series B 21(2), 396-399.
    Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix. Psychological Bulletin
    87(2), 245-251.
    Graham, Y. and Baldwin, T. (2014). Testing for significance of increased correlation with human
    judgment. EMNLP 2014, 172-176.

    Examples
    --------
    >>> res = williams_test(0.9, 0.8, 0.85, 20, alternative="greater")
    >>> round(float(res.statistic), 4), float(res.df), round(float(res.pvalue), 4)
    (1.7292, 17.0, 0.0509)
    """
    r12, r13, r23, n, alternative = _williams_test_iv(r12, r13, r23, n, alternative)
    # written symmetrically in r12 and r13 (r12 ** 2 + r13 ** 2, r12 * r13, r12 + r13), so that swapping the
    # two metrics negates t bit for bit
    k = 1.0 - (r12 ** 2 + r13 ** 2) - r23 ** 2 + 2.0 * (r12 * r13) * r23
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = 2.0 * k * (n - 1.0) / (n - 3.0) + (r12 + r13) ** 2 / 4.0 * (1.0 - r23) ** 3
        t = (r12 - r13) * np.sqrt((n - 1.0) * (1.0 + r23)) / np.sqrt(np.where(denominator > 0, denominator, np.nan))
    df = n - 3.0
    if alternative == "greater":
        p = stats.t.sf(t, df)
    elif alternative == "less":
        p = stats.t.sf(-t, df)  # = cdf(t); sf(-t) mirrors 'greater' exactly when the metrics are swapped
    else:
        p = np.minimum(1.0, 2.0 * stats.t.sf(np.abs(t), df))
    # X and Y perfectly linearly related (identical for Pearson): t is 0 / 0; no difference, p = 1
    tolerance = 100 * np.finfo(np.float64).eps
    same = (1.0 - r23 <= tolerance) & (np.abs(r12 - r13) <= tolerance)
    t = np.where(same, 0.0, t)
    p = np.where(same, 1.0, p)
    t, df, p = np.broadcast_arrays(t, df, p)
    return WilliamsResult(statistic=t[()] * 1.0, df=df[()] * 1.0, pvalue=np.asarray(p, dtype=float)[()])


def _williams_test_iv(r12, r13, r23, n, alternative):
    alternative = check_alternative(alternative)
    out = []
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        r = np.asarray(r, dtype=np.float64)
        outside = np.abs(r) > 1.0
        if outside.any():
            raise ParameterError(f"`{name}` must be in [-1, 1]; got {float(r[outside].flat[0])!r}.")
        out.append(r)
    n_arr = np.asarray(n, dtype=np.float64)
    bad = ~(n_arr >= 4) | (n_arr != np.round(n_arr))
    if bad.any():
        shown = n if n_arr.ndim == 0 else n_arr[bad].flat[0].item()
        raise ParameterError(f"`n` must be an integer >= 4; got {shown!r}.")
    return out[0], out[1], out[2], n_arr, alternative
