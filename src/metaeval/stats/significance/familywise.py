"""The multiplicity problem of k pairwise comparisons: family-wise error and per-comparison levels.

Riezler & Maxwell (2005, section 4.4), after Cohen (1995): when each of ``k`` comparisons rejects a true
null hypothesis with probability ``p_c``, the probability of at least one false rejection in the whole
experiment (the family-wise or experimentwise error) is, for independent comparisons,

``p_e = 1 - (1 - p_c)^k``

(an approximation otherwise: for positively dependent tests ``p_e`` is at most this value, Sidak 1967;
under any dependence at most ``min(1, k p_c)``, Bonferroni). Solving for ``p_c`` gives the
per-comparison level that keeps ``p_e`` at ``alpha``: Sidak's ``1 - (1 - alpha)^(1/k)``, slightly larger
(less strict) than Bonferroni's ``alpha / k``. Benchmarking ``n`` systems against each other makes
``k = n (n - 1) / 2`` comparisons.

The p-value form of the same correction (``1 - (1 - p)^m``, and Holm's step-down with it) is
:func:`metaeval.adjust_pvalues` with ``method='sidak'`` / ``'holm-sidak'``.
"""
from __future__ import annotations

import math

import numpy as np

from metaeval.errors import ParameterError, check_choice, check_int

__all__ = ["LEVEL_METHODS", "familywise_error", "n_pairwise_comparisons", "per_comparison_level"]

LEVEL_METHODS = ("sidak", "bonferroni")
"""Per-comparison levels of :func:`per_comparison_level`."""

MAX_COMPARISONS = 2**53
"""The largest ``k`` accepted: every integer up to it is exact in float64, in which ``(1 - p_c)^k`` is computed."""


def _probability_iv(name: str, value, *, closed: bool):
    """A probability (or an array of them) as float64; [0, 1] when ``closed``, else (0, 1)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    interval = "[0, 1]" if closed else "(0, 1)"
    if array is None or array.dtype.kind != "f" or isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"`{name}` must be a number in {interval}; got {value!r}.")
    inside = (array >= 0.0) & (array <= 1.0) if closed else (array > 0.0) & (array < 1.0)
    if not inside.all():
        bad = value if array.ndim == 0 else float(array[~inside].flat[0])
        raise ParameterError(f"`{name}` must be a number in {interval}; got {bad!r}.")
    return array


def _at_most(name: str, value: int, maximum: int) -> int:
    if value > maximum:
        shown = f"an integer of {len(str(value))} digits" if value > 10**18 else str(value)
        raise ParameterError(f"`{name}` must be an integer <= {maximum}; got {shown}.")
    return value


def _comparisons_iv(comparisons) -> np.ndarray:
    array = np.asarray(comparisons)
    if array.ndim == 0:
        return np.asarray(_at_most("comparisons", check_int("comparisons", comparisons, minimum=1), MAX_COMPARISONS))
    if array.dtype.kind not in "iu" or array.size == 0 or (array < 1).any():
        raise ParameterError(f"`comparisons` must be an integer >= 1; got {comparisons!r}.")
    return array.astype(np.int64)


def _out(value: np.ndarray):
    return float(value) if value.ndim == 0 else value


def familywise_error(per_comparison, comparisons):
    """Probability of at least one false rejection among ``k`` comparisons, each at level ``p_c``.

    Parameters
    ----------
    per_comparison : float or array_like in [0, 1]
        ``p_c``: the probability that one comparison rejects a true null hypothesis (its level).
    comparisons : int or array_like of int >= 1
        ``k``: the number of comparisons (``n (n - 1) / 2`` for all pairs of ``n`` systems, see
        :func:`n_pairwise_comparisons`). Broadcast against ``per_comparison``.

    Returns
    -------
    float or numpy.ndarray
        ``p_e = 1 - (1 - p_c)^k`` (a float for scalar inputs).

    Raises
    ------
    ParameterError
        If ``per_comparison`` is not in [0, 1] or ``comparisons`` is not an integer >= 1.

    Notes
    -----
    Exact for independent comparisons, an upper bound for positively dependent ones (Sidak 1967).
    Computed as ``-expm1(k log1p(-p_c))``, accurate for tiny ``p_c``.

    References
    ----------
    Riezler, S. and Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and significance
    testing for MT. ACL-05 Workshop on Intrinsic and Extrinsic Evaluation Measures for MT and/or
    Summarization, 57-64 (section 4.4). Cohen, P. R. (1995). Empirical Methods for Artificial
    Intelligence. MIT Press.

    Examples
    --------
    Riezler & Maxwell's benchmark of 15 systems: 105 comparisons at ``p_c = .05``, and their 5
    comparisons at ``p_c = .015``:

    >>> round(familywise_error(0.05, 105), 4), round(familywise_error(0.015, 5), 4)
    (0.9954, 0.0728)
    """
    p = _probability_iv("per_comparison", per_comparison, closed=True)
    k = _comparisons_iv(comparisons)
    with np.errstate(divide="ignore"):  # p_c = 1: log1p(-1) = -inf, and 1 - 0^k = 1
        return _out(np.minimum(1.0, -np.expm1(k * np.log1p(-p))))


def per_comparison_level(alpha, comparisons, *, method: str = "sidak"):
    """The per-comparison level that holds the family-wise error of ``k`` comparisons at ``alpha``.

    Parameters
    ----------
    alpha : float or array_like in (0, 1)
        The target family-wise (experimentwise) error rate ``p_e``.
    comparisons : int or array_like of int >= 1
        ``k``, broadcast against ``alpha``.
    method : {'sidak', 'bonferroni'}, default 'sidak'
        ``'sidak'``: ``1 - (1 - alpha)^(1/k)``, the inverse of :func:`familywise_error` (exact for
        independent comparisons); ``'bonferroni'``: ``alpha / k`` (valid under any dependence, slightly
        stricter).

    Returns
    -------
    float or numpy.ndarray
        ``p_c`` (a float for scalar inputs): reject a comparison when its p-value is ``<= p_c``.

    Raises
    ------
    ParameterError
        If ``alpha`` is not in (0, 1), ``comparisons`` is not an integer >= 1 or ``method`` is unknown.

    References
    ----------
    Sidak, Z. (1967). Rectangular confidence regions for the means of multivariate normal
    distributions. JASA 62(318), 626-633. Riezler & Maxwell (2005), section 4.4 (see
    :func:`familywise_error`).

    Examples
    --------
    >>> round(per_comparison_level(0.05, 105), 6), round(per_comparison_level(0.05, 105, method="bonferroni"), 6)
    (0.000488, 0.000476)
    >>> round(familywise_error(per_comparison_level(0.05, 10), 10), 12)
    0.05
    """
    a = _probability_iv("alpha", alpha, closed=False)
    k = _comparisons_iv(comparisons)
    method = check_choice("method", method, LEVEL_METHODS)
    if method == "bonferroni":
        return _out(np.asarray(a / k, dtype=np.float64))
    return _out(-np.expm1(np.log1p(-a) / k))


def n_pairwise_comparisons(n_systems: int) -> int:
    """``n (n - 1) / 2``: the comparisons of every pair of ``n`` systems (105 for 15 systems).

    Raises
    ------
    ParameterError
        If ``n_systems`` is not an integer >= 2.
    """
    n = _at_most("n_systems", check_int("n_systems", n_systems, minimum=2), 2**27)  # k = n (n - 1) / 2 < 2^53
    return math.comb(n, 2)
