"""Multiple-comparison corrections of p-values (family-wise error and false discovery rate)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from metaeval.errors import ParameterError, check_int, check_probability
from metaeval.vocabulary import CORRECTIONS, FAMILYWISE_CORRECTIONS, check_correction, check_family

__all__ = ["CORRECTION_METHODS", "SignificanceFloor", "adjust_pvalues", "benjamini_yekutieli", "significance_floor"]

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
    method : {'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg'}
        ``'bonferroni'``, ``'sidak'``, ``'holm'`` and ``'holm-sidak'`` control the family-wise error
        rate (Sidak's two under independence or positive orthant dependence of the tests, Bonferroni's
        and Holm's under any dependence), ``'benjamini-hochberg'`` the false discovery rate (under
        independence or positive dependence).

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
    * sidak: ``1 - (1 - p_i)^m``, the family-wise error ``p_e = 1 - (1 - p_c)^k`` of Riezler & Maxwell
      (2005) with ``p_c = p_i`` and ``k = m`` (:func:`metaeval.familywise_error`);
    * holm: ``p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``;
    * holm-sidak: ``p~_(i) = max_{j <= i} 1 - (1 - p_(j))^(m - j + 1)`` (Holm's step-down with Sidak's
      levels);
    * benjamini-hochberg: ``p~_(i) = min_{j >= i} min(1, m p_(j) / j)``.

    Sidak's ``1 - (1 - p)^m`` is computed as ``-expm1(m log1p(-p))`` (exact for small ``p``). It is
    never above Bonferroni's ``min(1, m p)`` (and Holm-Sidak never above Holm), so it rejects at least
    as often, and it is within ``(m - 1) m p^2 / 2`` of it.

    These are the adjusted p-values of R's ``p.adjust`` and statsmodels' ``multipletests``
    (``'bonferroni'``, ``'sidak'``, ``'holm'``, ``'holm-sidak'``, ``'fdr_bh'``). Tied p-values get the
    same adjusted value.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal of
    Statistics 6(2), 65-70.
    Sidak, Z. (1967). Rectangular confidence regions for the means of multivariate normal
    distributions. Journal of the American Statistical Association 62(318), 626-633.
    Riezler, S. and Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and significance
    testing for MT. ACL-05 Workshop on Intrinsic and Extrinsic Evaluation Measures for MT and/or
    Summarization, 57-64 (section 4.4, the multiplicity problem).
    Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical and
    powerful approach to multiple testing. Journal of the Royal Statistical Society B 57(1), 289-300.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="holm")
    array([0.03, 0.06, 0.06, 0.02])
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="benjamini-hochberg")
    array([0.02, 0.04, 0.04, 0.02])
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="sidak").round(6)
    array([0.039404, 0.150653, 0.114707, 0.01985 ])
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
    elif method == "sidak":
        adjusted = _sidak(values, m)
    else:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            adjusted_sorted = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * ranked))
        elif method == "holm-sidak":
            adjusted_sorted = np.maximum.accumulate(_sidak(ranked, m - i + 1))
        else:
            adjusted_sorted = _step_up(ranked, m)
        adjusted = np.empty(m)
        adjusted[order] = adjusted_sorted
    out[family] = adjusted
    return out


def _step_up(ranked: np.ndarray, m: int, factor: float = 1.0) -> np.ndarray:
    """Benjamini-Hochberg's step-up adjustment of sorted p-values, times ``factor`` (1 for BH, ``sum 1/k`` for BY)."""
    i = np.arange(1, m + 1)
    return np.minimum.accumulate(np.minimum(1.0, factor * m * ranked / i)[::-1])[::-1]


def benjamini_yekutieli(pvalues) -> np.ndarray:
    """Benjamini-Yekutieli adjusted p-values: the false discovery rate under any dependence of the tests.

    ``p~_(i) = min_{j >= i} min(1, c(m) m p_(j) / j)`` with ``c(m) = sum_{k=1..m} 1/k``: Benjamini-Hochberg's
    step-up with the level divided by ``c(m)``. NaN entries are left out of the family and stay NaN (as in
    :func:`adjust_pvalues`, of which this is the dependence-proof FDR variant; R's ``p.adjust(method="BY")``,
    statsmodels' ``'fdr_by'``).

    References
    ----------
    Benjamini, Y. and Yekutieli, D. (2001). The control of the false discovery rate in multiple testing under
    dependency. The Annals of Statistics 29(4), 1165-1188.

    Examples
    --------
    >>> benjamini_yekutieli([0.01, 0.04, 0.03, 0.005]).round(4)
    array([0.0417, 0.0833, 0.0833, 0.0417])
    """
    p, _ = _adjust_pvalues_iv(pvalues, "none")
    out = p.copy()
    family = ~np.isnan(p)
    values = p[family]
    m = values.size
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    adjusted = np.empty(m)
    adjusted[order] = _step_up(values[order], m, float(np.sum(1.0 / np.arange(1, m + 1))))
    out[family] = adjusted
    return out


def _sidak(p, m):
    """``1 - (1 - p)^m`` without cancellation (``-expm1(m log1p(-p))``; p = 1 gives 1)."""
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf is the right limit: 1 - 0^m = 1
        return np.minimum(1.0, -np.expm1(m * np.log1p(-np.asarray(p, dtype=np.float64))))


def _adjust_pvalues_iv(pvalues, method):
    method = check_correction(method, param="method")
    p = np.array(pvalues, dtype=np.float64)  # a copy: never modify the caller's array
    bad = ~np.isnan(p) & ~((p >= 0.0) & (p <= 1.0))
    if bad.any():
        raise ParameterError(f"`pvalues` must be in [0, 1] (or NaN); got {float(p[bad].flat[0])!r}.")
    return p, method


@dataclass(frozen=True)
class SignificanceFloor:
    """Result of :func:`significance_floor`.

    Attributes
    ----------
    smallest : float
        The smallest corrected p-value any comparison of the family can reach.
    needed_resamples : int
        The fewest resamples with which ``smallest < alpha``.
    reachable : bool
        ``smallest < alpha`` (metaeval calls a comparison significant when its corrected p < alpha).
    message : str
        One line saying why nothing can be significant and what to do ("" when ``reachable``).
    """

    smallest: float
    needed_resamples: int
    reachable: bool
    message: str


def _smallest(n_resamples: int, family_size: int, method: str) -> float:
    p = 1.0 / (n_resamples + 1)  # the smallest Monte Carlo p-value (1 + 0) / (1 + k)
    if method in ("bonferroni", "holm"):
        return min(1.0, family_size * p)  # the float operations of adjust_pvalues for p_(1)
    if method in ("sidak", "holm-sidak"):
        return float(_sidak(p, family_size))  # the same float operations as adjust_pvalues
    return p  # benjamini-hochberg: m p_(m) / m when every p-value is the smallest; none: p


def _sidak_needed(family_size: int, alpha: float) -> int:
    """The smallest k >= 1 with ``_smallest(k, m, 'sidak') < alpha``: near ``1 / (1 - (1 - alpha)^(1/m)) - 1``,
    then settled on the float computation itself (so ``reachable`` and ``smallest < alpha`` always agree)."""
    level = -math.expm1(math.log1p(-alpha) / family_size)  # Sidak's per-comparison level
    k = max(1, math.ceil(1.0 / level) - 1)
    while k > 1 and _smallest(k - 1, family_size, "sidak") < alpha:
        k -= 1
    while _smallest(k, family_size, "sidak") >= alpha:
        k += 1
    return k


def significance_floor(*, n_resamples: int, family_size: int, correction: str, alpha: float,
                       family: str = "row") -> SignificanceFloor:
    """The smallest corrected p-value a family of Monte Carlo p-values can reach, and the resamples needed.

    Parameters
    ----------
    n_resamples : int
        Resamples ``k`` of a test whose p-values are ``(1 + count) / (1 + k)`` (the permutation test);
        they are at least ``1 / (k + 1)``. (Paired-bootstrap p-values can be 0: no floor.)
    family_size : int
        Number ``m`` of p-values corrected together (``P - 1`` over each row, ``P (P - 1)`` over the matrix).
    correction : {'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg'}
    alpha : float in (0, 1)
        Significance level (significant: corrected p < alpha).
    family : {'matrix', 'row'}
        Only names the family in ``message``.

    Returns
    -------
    SignificanceFloor

    Notes
    -----
    Bonferroni and Holm: ``min(1, m / (k + 1))``; Sidak and Holm-Sidak: ``1 - (1 - 1 / (k + 1))^m``;
    Benjamini-Hochberg and none: ``1 / (k + 1)``. ``needed_resamples`` is the smallest ``k`` with that
    value ``< alpha``, computed exactly with alpha as written (0.05 = 1/20): ``floor(m / alpha)``
    (``floor(1 / alpha)`` without a family-wise correction); for Sidak, about
    ``1 / (1 - (1 - alpha)^(1/m)) - 1``, settled on the floating-point value of the floor itself.

    Examples
    --------
    >>> floor = significance_floor(n_resamples=1000, family_size=33, correction="holm", alpha=0.01)
    >>> round(floor.smallest, 4), floor.needed_resamples, floor.reachable
    (0.033, 3300, False)
    """
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    family_size = check_int("family_size", family_size, minimum=1)
    method = check_correction(correction)
    alpha = check_probability("alpha", alpha)
    family = check_family(family)
    smallest = _smallest(n_resamples, family_size, method)
    if method in ("sidak", "holm-sidak"):
        needed = _sidak_needed(family_size, alpha)
        reachable = smallest < alpha
    else:
        # exact arithmetic with alpha as written (0.05 = 1/20): smallest < alpha  <=>  k + 1 > m / alpha
        m = family_size if method in FAMILYWISE_CORRECTIONS else 1
        bound = Fraction(m) / Fraction(repr(alpha))
        needed = max(1, math.floor(bound))  # the smallest k with k + 1 > m / alpha
        reachable = n_resamples + 1 > bound
    message = ""
    if not reachable:
        where = "over each row" if family == "row" else "over the whole matrix"
        after = "without correction" if method == "none" else f"after {method} {where}"
        relation = ">" if smallest > alpha else "="
        message = (f"no comparison can be significant: the smallest attainable p-value {after}"
                   f" ({family_size} comparisons) with {n_resamples} resamples is {smallest:.3g} {relation}"
                   f" alpha {alpha:g}; use at least {needed} resamples.")
    return SignificanceFloor(smallest, needed, reachable, message)
