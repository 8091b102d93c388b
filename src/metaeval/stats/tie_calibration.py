"""Tie calibration of pairwise accuracy (acc-eq) and tau-eq: the metric tie threshold that maximises them.

Deutsch, Foster & Freitag (2023) ("Ties Matter") make a metric predict a tie for a pair of items whenever
its two scores differ by at most ``epsilon``, and choose ``epsilon`` to maximise the statistic. Over the
pairs of each group (an input's systems at summary level, a system's inputs at by-system level, the
system means at system level, all cells at global level), a pair ``(a, b)`` is tied in the metric under
threshold ``t`` when ``max(x_a, x_b) <= min(x_a, x_b) + t`` on the snapped metric scores (the rule of
:func:`metaeval.stats.coefficients.correlation`, evaluated in floating point exactly as it is). Let
``e_ab`` be the smallest float ``t`` for which this holds (0 for pairs tied already). The statistic is a
step function of ``t`` that changes only at the values ``e_ab``: with ``v0`` the value of a pair when
the metric does not tie it and ``v1`` when it does (acc-eq: ``v0 = [concordant]``,
``v1 = [human tie]``; tau-eq: ``v0 = +1 concordant, -1 otherwise``, ``v1 = +1 human tie, -1
otherwise``),

    ``stat(t) = (1/G) sum_g (1/P_g) sum_{(a,b) in g} (v0_ab + [e_ab <= t] (v1_ab - v0_ab))``,

so one sort of the ``e_ab`` and one cumulative sum give ``stat`` at every candidate ``t`` in
``{0} U {e_ab}``, exactly the candidates a brute-force search over all thresholds would need. The
threshold reported is the smallest maximiser (as mt-metrics-eval's ``tau_optimization``, which this
reproduces without sampling pairs).

References
----------
Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter: Meta-Evaluating Modern Metrics with
Pairwise Accuracy and Tie Calibration. EMNLP 2023.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError, check_choice
from metaeval.stats.coefficients import _TieGroups
from metaeval.stats.levels import system_means
from metaeval.vocabulary import canonical_level

__all__ = ["CALIBRATED_COEFFICIENTS", "TieCalibration", "calibrate_ties", "calibration_curve", "group_vectors", "pair_table",
           "recalibrated"]

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
        Every candidate threshold (0 and each distinct pair difference, increasing) and the statistic there.
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


def pair_table(xg, zg, units=None):
    """Every pair of valid positions of the rows of ``xg``, ``zg`` (G, n).

    Returns ``(group, e, concordant, human_tied, pairs_per_group)``: the row of each pair, the smallest
    threshold tying it in the metric (0 if tied already), whether it is concordant (tied in neither and
    ordered alike), whether the human ties it, and ``P_g``. ``units`` (G, n): pairs of two copies of one
    unit (a resampled system drawn twice) are left out, as in every pair count of metaeval.
    """
    g, n = xg.shape
    valid = np.isfinite(xg) & np.isfinite(zg)
    nv = valid.sum(axis=1)
    sx = _TieGroups(np.where(valid, xg, np.nan), nv).snapped()
    sz = _TieGroups(np.where(valid, zg, np.nan), nv).snapped()
    ia, ib = np.triu_indices(n, 1)
    ok = valid[:, ia] & valid[:, ib]
    if units is not None:
        ok &= units[:, ia] != units[:, ib]
    rows, k = np.nonzero(ok)
    xa, xb = sx[rows, ia[k]], sx[rows, ib[k]]
    za, zb = sz[rows, ia[k]], sz[rows, ib[k]]
    lo, hi = np.minimum(xa, xb), np.maximum(xa, xb)
    e = _smallest_threshold(lo, hi)
    human_tied = za == zb
    concordant = (np.sign(xa - xb) * np.sign(za - zb)) > 0
    return rows, e, concordant, human_tied, np.bincount(rows, minlength=g)


def _smallest_threshold(lo, hi):
    """Per pair, the smallest float ``t >= 0`` with ``hi <= lo + t`` in floating point.

    ``lo + t`` is non-decreasing in ``t``, and non-negative floats are ordered as their int64 bit patterns,
    so a bisection over the bit patterns of ``[0, hi - lo rounded up]`` finds it exactly.
    """
    e = hi - lo
    for _ in range(64):  # hi - lo rounded down: a few ulps up make it fit
        short = lo + e < hi
        if not short.any():
            break
        e = np.where(short, np.nextafter(e, np.inf), e)
    # most pairs: e fits and the float below it does not (then e is the smallest); bisect the others
    rest = np.flatnonzero((e > 0) & (lo + np.nextafter(e, -np.inf) >= hi))
    if rest.size:
        e[rest] = _bisect(lo[rest], hi[rest], e[rest])
    return np.where(lo >= hi, 0.0, e)


def _bisect(lo, hi, e):
    low = np.zeros(e.shape, dtype=np.int64)  # bit pattern of 0.0: may fail
    high = e.view(np.int64).copy()  # satisfies the rule
    for _ in range(64):
        if not (high - low > 1).any():
            break
        mid = low + (high - low) // 2
        fits = lo + mid.view(np.float64) >= hi
        high = np.where(fits, mid, high)
        low = np.where(fits, low, mid)
    return high.view(np.float64)


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
                   max_pairs: int = defaults.TIE_CALIBRATION_MAX_PAIRS) -> TieCalibration:
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

    Returns
    -------
    TieCalibration

    Raises
    ------
    ParameterError
        For another coefficient, a bad level, or more than ``max_pairs`` pairs.

    Notes
    -----
    See the module docstring: ``stat(t)`` is evaluated at ``0`` and at every distinct pair threshold
    ``e_ab``; ``level_correlation(x, z, level=level, coefficient=coefficient, tie_threshold=t)`` gives the
    same values (tested against that brute-force search). Acc-eq is Deutsch et al.'s acc23, tau-eq their
    tau23.

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
    table = pair_table(xg, zg)
    thresholds, stats = calibration_curve(*table, coefficient)
    best = int(np.nanargmax(stats)) if np.isfinite(stats).any() else 0
    return TieCalibration(float(thresholds[best]), float(stats[best]), thresholds, stats, coefficient, level,
                          int(table[0].size))


def recalibrated(table, coefficient: str, group_weights, batch: int = 64):
    """Tie calibration re-optimised in every resample whose groups carry count weights ``(k, G)``.

    ``table`` is a :func:`pair_table` of the original groups (sorted once); a resample that draws group
    ``g`` ``c_g`` times weights its pairs by ``c_g``, so its curve is one weighted cumulative sum over the
    same sorted pairs (BOOT-INPUTS at item-grouped level: copies of one input are separate groups). Returns
    ``(statistics, thresholds)`` of shape (k,); batches of ``batch`` resamples bound memory and do not
    change the result (each resample's sums run in the same order). With complete data (every group has
    ``P`` pairs) the sums are integers, exact, and run in a compiled loop when numba is installed
    (:mod:`metaeval.stats.kernels.calibration`), with identical results.
    """
    rows, e, concordant, human_tied, per_group = table
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
        from metaeval.stats.kernels.calibration import best_integer_curves

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
