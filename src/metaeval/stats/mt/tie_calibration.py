"""Tie calibration of pairwise accuracy (acc-eq) and tau-eq: the metric tie threshold that maximises them.

Deutsch, Foster & Freitag (2023) ("Ties Matter") make a metric predict a tie for a pair of items whenever
its two scores differ by at most ``epsilon``, and choose ``epsilon`` to maximise the statistic. Over the
pairs of each group (an input's systems at summary level, a system's inputs at by-system level, the
system means at system level, all cells at global level):

* **The gap rule.** A pair's *gap* is ``d_ab = |x_a - x_b|`` of its snapped metric scores (the tie groups
  of :mod:`metaeval.stats.correlations.coefficients`: scores tied under the library's tie rule are equal, so their
  gap is 0), computed once in floating point. Under threshold ``eps`` the metric ties the pair iff
  ``d_ab <= eps``, the rule of mt-metrics-eval's ``tau_optimization`` and of every pairwise coefficient
  with ``tie_threshold=eps`` (:func:`metaeval.stats.correlations.coefficients.correlation`): the same number is the
  candidate threshold and what the rule compares, so a reported threshold reproduces its statistic.
* **Gap classes.** Gaps equal in exact arithmetic may differ in their last bits (``0.3 - 0.1`` vs
  ``0.5 - 0.3``, a scaled or shifted metric). The positive gaps, sorted, are grouped into classes of
  neighbours at most ``tol = rtol * spread`` apart, ``spread`` the range (max - min) of the snapped
  metric scores of all groups and ``rtol`` the relative tie tolerance passed in (:data:`TIE_RTOL` = 1e-9 by
  default; 0 under ``tie_tolerance=0``); each class is one candidate, the **largest gap of the class**
  (:func:`gap_classes`). ``tol`` scales with the metric and ignores shifts, so the candidates, and
  the statistic, do not change when the metric is scaled or shifted (up to rounding below ``tol``).
  Real gaps of rounded scores (multiples of 0.5, say) are exact and far more than ``tol`` apart: the
  classes are the distinct gaps, exactly mt-metrics-eval's candidates.

With ``e_ab`` the candidate of a pair's class (0 for a gap of 0), the statistic is a step function of
``eps`` that changes only at candidates: with ``v0`` the value of a pair when the metric does not tie
it and ``v1`` when it does (acc-eq: ``v0 = [concordant]``, ``v1 = [human tie]``; tau-eq:
``v0 = +1 concordant, -1 otherwise``, ``v1 = +1 human tie, -1 otherwise``),

    ``stat(eps) = (1/G) sum_g (1/P_g) sum_{(a,b) in g} (v0_ab + [e_ab <= eps] (v1_ab - v0_ab))``,

and at a candidate ``[e_ab <= eps] = [d_ab <= eps]`` for every pair (the next class starts above
``eps + tol``). One sort of the ``e_ab`` and one cumulative sum give ``stat`` at every candidate in
``{0} U {e_ab}``. The threshold reported is the smallest maximiser (as mt-metrics-eval's
``tau_optimization``, which this reproduces without sampling pairs).

References
----------
Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter: Meta-Evaluating Modern Metrics with
Pairwise Accuracy and Tie Calibration. EMNLP 2023.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError, check_choice
from metaeval.stats.correlations.coefficients import _TieGroups
from metaeval.stats.correlations.levels import system_means
from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.vocabulary import canonical_level

__all__ = ["CALIBRATED_COEFFICIENTS", "PairTable", "TieCalibration", "calibrate_ties", "calibration_curve", "gap_classes",
           "group_vectors", "pair_table", "recalibrated"]

CALIBRATED_COEFFICIENTS = ("acc-eq", "tau-eq")
"""Coefficients whose tie threshold can be calibrated."""


@dataclass(frozen=True)
class TieCalibration:
    """Result of :func:`calibrate_ties`.

    Attributes
    ----------
    threshold : float
        The smallest metric tie threshold maximising the statistic.
    statistic : float
        The statistic at ``threshold`` (NaN when no group has 2 values).
    thresholds, statistics : ndarray
        Every candidate threshold (0 and the largest gap of each gap class, increasing) and the statistic
        there; each candidate is the gap ``|x_a - x_b|`` of some pair.
    coefficient, level : str
    n_pairs : int
        Pairs of the groups the statistic averages over.
    """

    threshold: float
    statistic: float
    thresholds: np.ndarray
    statistics: np.ndarray
    coefficient: str
    level: str
    n_pairs: int


def group_vectors(x, z, level: str):
    """The vectors whose pairs a level counts, as rows ``(G, n)``: inputs' columns, systems' rows, one
    vector of system means (system level, judged subset) or of every cell (global level)."""
    if level == "summary":
        return x.T, z.T
    if level == "by-system":
        return x, z
    if level == "system":
        xbar, zbar, _ = system_means(x, z)
        return xbar[None, :], zbar[None, :]
    return x.reshape(1, -1), z.reshape(1, -1)


class PairTable(NamedTuple):
    """Every pair of the groups, as built by :func:`pair_table`.

    Attributes
    ----------
    rows : ndarray of int
        The group of each pair.
    e : ndarray of float
        The smallest candidate threshold tying the pair in the metric: 0 for a pair tied already, else
        the largest gap of the pair's gap class (see :func:`gap_classes`).
    concordant, human_tied : ndarray of bool
        Concordant (tied in neither, ordered alike); tied by the human.
    per_group : ndarray of int
        ``P_g``, the pairs of each group.
    gap : ndarray of float
        ``|x_a - x_b|`` of the snapped metric scores, the number the tie rule compares with ``epsilon``.
    tolerance : float
        ``rtol * spread``: gaps closer than this are one candidate.
    """

    rows: np.ndarray
    e: np.ndarray
    concordant: np.ndarray
    human_tied: np.ndarray
    per_group: np.ndarray
    gap: np.ndarray
    tolerance: float


def pair_table(xg, zg, units=None, *, rtol: float = TIE_RTOL) -> PairTable:
    """Every pair of valid positions of the rows of ``xg``, ``zg`` (G, n), as a :class:`PairTable`.

    A pair's gap is ``|x_a - x_b|`` of the snapped metric scores (the tie groups of
    :mod:`metaeval.stats.correlations.coefficients`, so a pair tied already has gap 0), computed once: that number is
    what ``tie_threshold = eps`` compares (``gap <= eps``) and what the candidate threshold is made of.
    ``units`` (G, n): pairs of two copies of one unit (a resampled system drawn twice) are left out, as
    in every pair count of metaeval. ``rtol``: the relative tie tolerance of the tie groups and gap classes.
    """
    g, n = xg.shape
    valid = np.isfinite(xg) & np.isfinite(zg)
    nv = valid.sum(axis=1)
    sx = _TieGroups(np.where(valid, xg, np.nan), nv, rtol).snapped()
    sz = _TieGroups(np.where(valid, zg, np.nan), nv, rtol).snapped()
    ia, ib = np.triu_indices(n, 1)
    ok = valid[:, ia] & valid[:, ib]
    if units is not None:
        ok &= units[:, ia] != units[:, ib]
    rows, k = np.nonzero(ok)
    xa, xb = sx[rows, ia[k]], sx[rows, ib[k]]
    za, zb = sz[rows, ia[k]], sz[rows, ib[k]]
    gap = np.abs(xa - xb)
    tolerance = rtol * _spread(sx[valid])
    human_tied = za == zb
    concordant = (np.sign(xa - xb) * np.sign(za - zb)) > 0
    return PairTable(rows, gap_classes(gap, tolerance), concordant, human_tied, np.bincount(rows, minlength=g),
                     gap, tolerance)


def _spread(values):
    """``max - min`` of the values (0 when there are none)."""
    return float(values.max() - values.min()) if values.size else 0.0


def gap_classes(gap, tolerance):
    """Per pair, the candidate threshold of its gap: the largest gap of its class (0 for gap 0).

    The positive gaps, sorted, form classes of neighbours at most ``tolerance`` apart (a new class
    starts where ``g_i > g_{i-1} + tolerance``, evaluated in floating point). Threshold ``eps`` = the
    largest gap of a class ties, under ``gap <= eps``, exactly the pairs of that class and of the classes
    below: the next class starts above ``eps + tolerance``. Gaps that are equal in exact arithmetic but
    differ in the last bits (a scaled or shifted metric) are thereby one candidate, tied together. With
    ``tolerance = 0`` the classes are the distinct gaps, as in mt-metrics-eval.
    """
    gap = np.asarray(gap, dtype=np.float64)
    e = np.zeros(gap.shape)
    positive = np.flatnonzero(gap > 0)
    if positive.size:
        order = positive[np.argsort(gap[positive])]  # the classes do not depend on the order of equal gaps
        g = gap[order]
        new = np.ones(g.size, dtype=bool)
        new[1:] = g[1:] > g[:-1] + tolerance
        last = np.ones(g.size, dtype=bool)
        last[:-1] = new[1:]
        e[order] = g[last][np.cumsum(new) - 1]
    return e


def _values(coefficient, concordant, human_tied):
    if coefficient == "acc-eq":
        return concordant.astype(np.float64), human_tied.astype(np.float64)
    return np.where(concordant, 1.0, -1.0), np.where(human_tied, 1.0, -1.0)


def _uniform_pairs(per_group):
    """``P`` when every group with a pair has ``P`` pairs (complete data), else None."""
    sizes = per_group[per_group > 0]
    return int(sizes[0]) if sizes.size and (sizes == sizes[0]).all() else None


def _integer_values(coefficient, concordant, human_tied):
    """``(v0, v1 - v0)`` as small integers: a pair's value untied and its change when the metric ties it."""
    if coefficient == "acc-eq":
        v0 = concordant.astype(np.int64)
        return v0, human_tied.astype(np.int64) - v0
    v0 = np.where(concordant, 1, -1).astype(np.int64)
    return v0, np.where(human_tied, 1, -1).astype(np.int64) - v0


def _candidates(es):
    """``(last, lead)``: the last pair of each distinct threshold, and whether 0 precedes them."""
    last = np.ones(es.size, dtype=bool)
    last[:-1] = es[1:] != es[:-1]
    return last, es.size == 0 or es[0] > 0


def calibration_curve(rows, e, concordant, human_tied, per_group, coefficient, group_weights=None):
    """``(thresholds, statistics)`` from a :func:`pair_table`; ``group_weights`` (G,) weight the groups'
    statistics in the mean (bootstrap counts; default 1 for every group with a pair).

    When every group has the same number of pairs ``P`` and the weights are integers (complete data, any
    bootstrap counts), the curve is ``(integer sum) / (P * total weight)``: the sums are exact, so equal
    statistics are equal and the smallest maximiser is exact on every code path.
    """
    has = per_group > 0
    gw = has.astype(np.float64) if group_weights is None else np.where(has, group_weights, 0.0)
    total = gw.sum()
    if rows.size == 0 or total == 0:
        return np.zeros(1), np.full(1, np.nan)
    order = np.argsort(e, kind="stable")
    es = e[order]
    last, lead = _candidates(es)
    pairs = _uniform_pairs(per_group)
    if pairs is not None and np.array_equal(gw, np.round(gw)):
        v0, dv = _integer_values(coefficient, concordant, human_tied)
        counts = gw.astype(np.int64)[rows]
        base = int(np.sum(counts * v0))
        curve = (base + np.cumsum((counts * dv)[order])[last]) / (pairs * total)
        start = base / (pairs * total)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            w = (gw / np.where(has, per_group, 1) / total)[rows]
        v0, v1 = _values(coefficient, concordant, human_tied)
        start = float(np.sum(w * v0))
        curve = start + np.cumsum((w * (v1 - v0))[order])[last]
    thresholds = es[last]
    if lead:
        thresholds, curve = np.concatenate([[0.0], thresholds]), np.concatenate([[start], curve])
    return thresholds, curve


def calibrate_ties(x, z, *, level: str = "summary", coefficient: str = "acc-eq",
                   max_pairs: int = defaults.TIE_CALIBRATION_MAX_PAIRS, rtol: float = TIE_RTOL) -> TieCalibration:
    """The metric tie threshold maximising acc-eq or tau-eq at one level, found exactly.

    Parameters
    ----------
    x, z : array_like, shape (N, M)
        Metric and human scores, systems x inputs, NaN for missing.
    level : str
        ``'summary'`` (item-grouped, default), ``'by-system'``, ``'system'`` or ``'global'``.
    coefficient : {'acc-eq', 'tau-eq'}
    max_pairs : int
        Largest number of pairs enumerated (global level over many cells is quadratic).
    rtol : float, optional
        The relative tie tolerance (:mod:`metaeval.stats.correlations.ties`) of the tie groups and gap classes.

    Returns
    -------
    TieCalibration

    Raises
    ------
    ParameterError
        For another coefficient, a bad level, or more than ``max_pairs`` pairs.

    Notes
    -----
    See the module docstring: ``stat(eps)`` is evaluated at ``0`` and at every candidate, the largest gap
    ``|x_a - x_b|`` of each class of gaps at most ``TIE_RTOL * spread`` apart (the distinct gaps when
    they are exact, as for rounded scores); a pair is tied iff its gap is ``<= eps``, so
    ``level_correlation(x, z, level=level, coefficient=coefficient, tie_threshold=eps)`` gives the same
    values (tested against that brute-force search and against mt-metrics-eval's algorithm on WMT20
    en-de MQM), and the result does not change when ``x`` is scaled or shifted. Acc-eq is Deutsch et
    al.'s acc23, tau-eq their tau23.

    References
    ----------
    Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter. EMNLP 2023.

    Examples
    --------
    >>> x = [[0.10, 0.20], [0.11, 0.90], [0.50, 0.40]]
    >>> z = [[1.0, 1.0], [1.0, 3.0], [2.0, 2.0]]
    >>> cal = calibrate_ties(x, z, level="summary")
    >>> round(cal.threshold, 2), round(cal.statistic, 4)
    (0.01, 1.0)
    """
    coefficient = check_choice("coefficient", coefficient, CALIBRATED_COEFFICIENTS)
    level = canonical_level(level)
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if x.ndim != 2 or z.shape != x.shape:
        raise ParameterError(f"`z` must have the shape of `x` (systems, inputs); got {x.shape} and {z.shape}.")
    xg, zg = group_vectors(x, z, level)
    n = xg.shape[1]
    pairs = xg.shape[0] * n * (n - 1) // 2
    if pairs > max_pairs:
        raise ParameterError(
            f"`level` {level!r} has {pairs} pairs, more than max_pairs={max_pairs} that tie calibration "
            "enumerates; calibrate at an item-grouped level ('summary' or 'by-system') or raise max_pairs."
        )
    table = pair_table(xg, zg, rtol=rtol)
    thresholds, stats = calibration_curve(*table[:5], coefficient)
    best = int(np.nanargmax(stats)) if np.isfinite(stats).any() else 0
    return TieCalibration(float(thresholds[best]), float(stats[best]), thresholds, stats, coefficient, level,
                          int(table[0].size))


def recalibrated(table, coefficient: str, group_weights, batch: int = 64):
    """Tie calibration re-optimised in every resample whose groups carry count weights ``(k, G)``.

    ``table`` is a :func:`pair_table` of the original groups (sorted once; its gap classes, hence the
    candidates, are those of the original data, which equal each resample's own whenever the gaps are
    exact or far apart - see the module docstring); a resample that draws group
    ``g`` ``c_g`` times weights its pairs by ``c_g``, so its curve is one weighted cumulative sum over the
    same sorted pairs (BOOT-INPUTS at item-grouped level: copies of one input are separate groups). Returns
    ``(statistics, thresholds)`` of shape (k,); batches of ``batch`` resamples bound memory and do not
    change the result (each resample's sums run in the same order). With complete data (every group has
    ``P`` pairs) the sums are integers, exact, and run in a compiled loop when numba is installed
    (:mod:`metaeval.stats.kernels.kendall.calibration`), with identical results.
    """
    rows, e, concordant, human_tied, per_group = table[:5]
    order = np.argsort(e, kind="stable")
    es, rs = e[order], rows[order]
    last, lead = _candidates(es)
    thresholds = es[last]
    if lead:
        thresholds = np.concatenate([[0.0], thresholds])
    cw = np.asarray(group_weights, dtype=np.float64)
    has = per_group > 0
    k = cw.shape[0]
    stats, best_t = np.full(k, np.nan), np.zeros(k)
    pairs = _uniform_pairs(per_group)
    if pairs is not None and np.array_equal(cw, np.round(cw)):
        from metaeval.stats.kernels.kendall.calibration import best_integer_curves

        v0, dv = _integer_values(coefficient, concordant[order], human_tied[order])
        counts = (cw * has).astype(np.int64)
        value, idx = best_integer_curves(rs, v0, dv, last, lead, counts, batch)
        total = counts.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            stats = np.where(total > 0, value / (pairs * np.where(total > 0, total, 1)), np.nan)
        return stats, np.where(total > 0, thresholds[idx], 0.0)
    v0, v1 = _values(coefficient, concordant[order], human_tied[order])
    inv = np.where(has, 1.0 / np.where(has, per_group, 1), 0.0)
    for lo in range(0, k, batch):
        c = cw[lo:lo + batch] * has
        total = c.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            w = (c * inv)[:, rs] / total
        base = (w * v0).sum(axis=1, keepdims=True)
        curve = base + np.cumsum(w * (v1 - v0), axis=1)[:, last]
        if lead:
            curve = np.concatenate([base, curve], axis=1)
        ok = np.isfinite(curve).any(axis=1)
        idx = np.argmax(np.where(np.isfinite(curve), curve, -np.inf), axis=1)
        stats[lo:lo + batch] = np.where(ok, curve[np.arange(c.shape[0]), idx], np.nan)
        best_t[lo:lo + batch] = thresholds[idx]
    return stats, best_t
