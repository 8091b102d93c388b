"""Multiple-comparison corrections of p-values (family-wise error and false discovery rate)."""
from __future__ import annotations

import numpy as np

from metaeval.errors import ParameterError
from metaeval.vocabulary import CORRECTIONS, check_correction

__all__ = ["CORRECTION_METHODS", "adjust_pvalues"]

CORRECTION_METHODS = CORRECTIONS
"""Names accepted by :func:`adjust_pvalues`."""


def adjust_pvalues(pvalues, *, method: str) -> np.ndarray:
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    pvalues : array_like
        p-values in [0, 1], of any shape. The family is every non-NaN entry of the array; NaN entries
        (e.g. the diagonal of an all-pairs matrix) are ignored and stay NaN. To correct several
        families, call the function once per family.
    method : {'none', 'bonferroni', 'holm', 'benjamini-hochberg'}
        ``'bonferroni'`` and ``'holm'`` control the family-wise error rate, ``'benjamini-hochberg'``
        the false discovery rate (under independence or positive dependence).

    Returns
    -------
    numpy.ndarray
        Adjusted p-values, of the shape of ``pvalues``: reject hypothesis i at level alpha when its
        adjusted p-value is ``<= alpha``. The input is not modified.

    Raises
    ------
    ParameterError
        For an unknown method or a p-value outside [0, 1].

    Notes
    -----
    With ``m`` the size of the family and ``p_(1) <= ... <= p_(m)`` the sorted p-values:

    * bonferroni: ``min(1, m p_i)``;
    * holm: ``p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``;
    * benjamini-hochberg: ``p~_(i) = min_{j >= i} min(1, m p_(j) / j)``.

    These are the adjusted p-values of R's ``p.adjust`` and statsmodels' ``multipletests``
    (``'bonferroni'``, ``'holm'``, ``'fdr_bh'``). Tied p-values get the same adjusted value.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
    Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical and
    powerful approach to multiple testing. Journal of the Royal Statistical Society B 57(1), 289-300.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="holm")
    array([0.03, 0.06, 0.06, 0.02])
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="benjamini-hochberg")
    array([0.02, 0.04, 0.04, 0.02])
    """
    p, method = _adjust_pvalues_iv(pvalues, method)
    out = p.copy()
    family = ~np.isnan(p)
    values = p[family]
    m = values.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        adjusted = np.minimum(1.0, m * values)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            adjusted_sorted = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * ranked))
        else:
            adjusted_sorted = np.minimum.accumulate(np.minimum(1.0, m * ranked / i)[::-1])[::-1]
        adjusted = np.empty(m)
        adjusted[order] = adjusted_sorted
    out[family] = adjusted
    return out


def _adjust_pvalues_iv(pvalues, method):
    method = check_correction(method, param="method")
    p = np.array(pvalues, dtype=np.float64)  # a copy: never modify the caller's array
    bad = ~np.isnan(p) & ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        raise ParameterError(f"`pvalues` must be in [0, 1] (or NaN); got {float(p[bad].flat[0])!r}.")
    return p, method
