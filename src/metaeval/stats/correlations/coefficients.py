"""Correlation coefficients between metric scores and human scores, batched over any number of axes.

Every coefficient is computed by one function, :func:`correlation`, which correlates the 1-D slices of
two arrays along ``axis``. Positions where either value is missing (NaN or infinite) are dropped from
their slice; a coefficient that is undefined on a slice (fewer than 2 valid pairs, a constant vector) is
NaN. These rules are ours and do not depend on the scipy version.

Ties
----
Two values ``a`` and ``b`` of one vector ``v`` are *tied* when ``|a - b| <= tol(v)``, the tie rule of
:mod:`metaeval.stats.correlations.ties`: ``tol(v) = max(TIE_RTOL * spread(v), NOISE_RTOL * max|v|)``, relative to the
spread of the vector's valid values (and to their magnitude only at the rounding level), so every
coefficient is invariant to shifting and scaling the scores. Averaged scores differ in the last bit
depending on the summation order (``1/3 + 1/3 + 4/3`` is ``2.0`` but ``4/3 + 1/3 + 1/3`` is
``1.9999999999999998``); the tolerance makes them tie on every code path (a loop, a vectorized sum, a
resampling kernel). Tie *groups* are the transitive closure of this relation: the values of a vector are
sorted and a new group starts wherever a value is not tied with its predecessor. Every value is then
replaced by the first value of its group ("snapped") and all rank statistics use exact comparisons of
snapped values. This differs from the plain pairwise relation only when near-ties chain over more than
``tol`` (e.g. ``0``, ``0.6e-9``, ``1.2e-9`` in a vector of spread 1 form one group), which real scores
never do. A vector is *constant* for the rank coefficients when it forms a single tie group. Pearson's r
does not rank: a vector is constant for it when its spread is within ``NOISE_RTOL * max|v|``
(:func:`metaeval.stats.correlations.ties.is_constant`), whatever the tie tolerance, and it is computed on centred
values scaled by a power of two, so neither 1e-300 nor 1e300 under- or overflows.
"""
from __future__ import annotations

import numpy as np

from metaeval.errors import ParameterError
from metaeval.stats.correlations.sorted_counts import counts_sorted
from metaeval.stats.correlations.ties import TIE_RTOL, are_tied, is_constant, tolerance_from_extent
from metaeval.vocabulary import (
    COEFFICIENT_ALIASES,
    COEFFICIENTS,
    PAIRWISE_COEFFICIENTS,
    canonical_coefficient,
    check_tie_threshold,
)

__all__ = ["COEFFICIENTS", "COEFFICIENT_ALIASES", "PAIRWISE_COEFFICIENTS", "TIE_RTOL", "canonical_coefficient",
           "TieGroups",
           "coefficient_from_counts", "constant_rows", "copy_pairs", "correlation", "formula_from_counts",
           "pair_count_rows", "pearson_of_rows", "rescaled"]


PAIRWISE_MAX_N = 64
"""Vectors up to this length count their pairs directly (O(n^2) per vector, the fastest for short
vectors in large batches); longer ones use the sorting path (O(n log n), or O(n log^2 n) with a
``tie_threshold``). Both paths give identical integer counts."""

_CHUNK_ELEMENTS = 1 << 20  # rows are processed in chunks of about this many elements


def correlation(x, y, coefficient: str, *, axis: int = -1, tie_threshold: float = 0.0, rtol: float = TIE_RTOL):
    """Correlation between ``x`` (metric) and ``y`` (human) along ``axis``, batched over the other axes.

    Parameters
    ----------
    x, y : array_like
        Metric scores and human scores of the same shape. NaN (or infinite) marks a missing value; a
        position missing in either array is dropped from that slice.
    coefficient : str
        One of :data:`COEFFICIENTS` (or ``'kendall'`` for ``'kendall-b'``).
    axis : int, optional
        Axis along which the vectors lie. Default -1.
    tie_threshold : float, optional
        For ``'accuracy'``, ``'tau-eq'`` and ``'acc-eq'`` only: two metric scores are also tied when
        their gap ``|a - b|`` is at most ``tie_threshold`` (Deutsch, Foster & Freitag 2023). Default 0.
    rtol : float, optional
        The relative tie tolerance of every rank statistic (:mod:`metaeval.stats.correlations.ties`; default
        :data:`TIE_RTOL`, 0 compares exactly as scipy does).

    Returns
    -------
    numpy.ndarray or numpy.float64
        The coefficients, of the shape of ``x`` without ``axis`` (a scalar for 1-D input). NaN where
        fewer than 2 valid pairs remain, where ``x`` or ``y`` is constant for ``'pearson'``,
        ``'spearman'`` and ``'kendall-*'``, and where every pair is tied in ``y`` for ``'accuracy'``.

    Raises
    ------
    ParameterError
        For an unknown coefficient, arrays of different shapes, a bad ``axis`` or ``tie_threshold``.

    Notes
    -----
    Over the ``P = n (n - 1) / 2`` pairs of the ``n`` valid positions, with ``dx``, ``dy`` the
    differences of a pair and ties as in the module docstring, let ``C`` / ``D`` count the concordant /
    discordant pairs (tied in neither), ``T_x`` the pairs tied in ``x`` only, ``T_y`` in ``y`` only,
    ``T_xy`` in both, ``S = C - D``, and ``m`` the smaller number of distinct values of ``x`` and ``y``:

    * pearson: ``sum(dx_i dy_i) / sqrt(sum(dx_i^2) sum(dy_i^2))`` with ``dx_i = x_i - mean(x)``;
    * spearman: Pearson's r of the average ranks (tied values share the mean of their ranks);
    * kendall-a: ``S / P``;
    * kendall-b: ``S / sqrt((P - T_x - T_xy) (P - T_y - T_xy))``;
    * kendall-c: ``2 S / (n^2 (m - 1) / m)`` (Stuart's tau-c, as in scipy);
    * accuracy: ``C / (C + D + T_x)``: among the pairs that the human does not tie, the fraction the
      metric orders the same way (a metric tie counts as a disagreement). With continuous human scores
      this is the pairwise accuracy of Kocmi et al. (2021);
    * acc-eq: ``(C + T_xy) / P`` and tau-eq: ``(C + T_xy - D - T_x - T_y) / P`` (Deutsch, Foster &
      Freitag 2023): ties in both count as agreement, a tie in only one as disagreement.

    ``x`` is the metric: with ``tie_threshold = eps`` a pair is also tied in ``x`` when the gap of its
    snapped values, ``|a - b|`` computed in floating point, is at most ``eps`` (on every path; the
    thresholds of :mod:`metaeval.stats.mt.tie_calibration` are such gaps); ties in ``y`` never use the
    threshold. Only ``'accuracy'`` is not symmetric in ``x`` and ``y``.

    Kendall-type counts are exact integers. Vectors up to :data:`PAIRWISE_MAX_N` values compare all
    pairs; longer ones (global level) use Knight's O(n log n) merge-sort algorithm (O(n log^2 n) with a
    tie threshold), which gives identical counts.

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3), 239-251.
    Stuart, A. (1953). The estimation and comparison of strengths of association in contingency tables.
    Biometrika 40(1/2), 105-110.
    Kocmi, T. et al. (2021). To ship or not to ship: an extensive evaluation of automatic metrics for
    machine translation. WMT 2021.
    Deutsch, D., Foster, G. and Freitag, M. (2023). Ties matter: meta-evaluating modern metrics with
    pairwise accuracy and tie calibration. EMNLP 2023.

    Examples
    --------
    >>> round(float(correlation([1, 2, 3, 4], [1, 3, 2, 4], "kendall-b")), 4)
    0.6667
    >>> correlation([[1, 2, 3], [3, 2, 1]], [[1, 2, 3], [1, 2, 3]], "spearman")
    array([ 1., -1.])
    """
    x, y, coefficient, axis, tie_threshold = _correlation_iv(x, y, coefficient, axis, tie_threshold)
    xm = np.moveaxis(x, axis, -1)
    ym = np.moveaxis(y, axis, -1)
    out_shape = xm.shape[:-1]
    n = xm.shape[-1]
    rows = int(np.prod(out_shape))
    r = correlation_rows(xm.reshape(rows, n), ym.reshape(rows, n), coefficient, tie_threshold, rtol=rtol)
    return r.reshape(out_shape)[()]


def _correlation_iv(x, y, coefficient, axis, tie_threshold):
    coefficient = canonical_coefficient(coefficient)
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim == 0:
        raise ParameterError(f"`x` must be an array with at least 1 dimension; got shape {x.shape}.")
    if y.shape != x.shape:
        raise ParameterError(f"`y` must have the shape of `x`, {x.shape}; got shape {y.shape}.")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ParameterError(f"`axis` must be an integer in [{-x.ndim}, {x.ndim}); got {axis!r}.")
    tie_threshold = check_tie_threshold(tie_threshold, coefficient)
    return x, y, coefficient, int(axis), tie_threshold


def correlation_rows(x: np.ndarray, y: np.ndarray, coefficient: str, tie_threshold: float = 0.0,
                     units: np.ndarray | None = None, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """Core of :func:`correlation` on validated float arrays of shape ``(B, n)``; returns shape ``(B,)``.

    For callers inside ``stats/`` that validated their arguments once (``coefficient`` canonical,
    ``tie_threshold`` checked). Does not modify its inputs. ``rtol``: the relative tie tolerance.

    ``units`` (int, ``(B, n)``), for resampled vectors: the original unit (system, input or cell) each
    position is a copy of. Pairs of two copies of one unit are not pairs of the data - they are tied in
    both vectors only because the same point was drawn twice - and are left out of every pair count
    (:func:`copy_pairs`): ``P``, the ties in x, in y and in both. Pearson and Spearman, which do not
    count pairs, treat copies as extra points.
    """
    b, n = x.shape
    out = np.full(b, np.nan)
    if n < 2 or b == 0:
        return out
    step = max(1, _CHUNK_ELEMENTS // n)
    for lo in range(0, b, step):
        chunk_units = None if units is None else units[lo:lo + step]
        out[lo:lo + step] = _rows(x[lo:lo + step], y[lo:lo + step], coefficient, tie_threshold, chunk_units, rtol)
    return out


def copy_pairs(units: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, the pairs of valid positions that are copies of one unit: ``sum_u C(c_u, 2)``.

    ``units`` (B, n) holds each position's original unit (e.g. the drawn system indices of a bootstrap
    resample), ``valid`` (B, n) which positions hold a value. ``c_u`` is the number of valid copies of
    unit ``u`` in the row.
    """
    b, n = units.shape
    pos = np.arange(n)
    s = np.sort(np.where(valid, units, -1 - pos), axis=-1)  # an invalid position is a unit of its own
    new = np.ones((b, n), dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
    return (pos - start).sum(axis=-1)


def _masked(x, y):
    valid = np.isfinite(x) & np.isfinite(y)
    all_valid = bool(valid.all())
    if not all_valid:
        x = np.where(valid, x, np.nan)
        y = np.where(valid, y, np.nan)
    return x, y, valid, all_valid, valid.sum(axis=-1)


def _rows(x, y, coefficient, t, units, rtol):
    if coefficient == "pdp":  # one vector: Pearson (metaeval.stats.correlations.pdp)
        coefficient = "pearson"
    if coefficient not in ("pearson", "spearman"):
        return coefficient_from_counts(coefficient, pair_count_rows(x, y, t, units, rtol=rtol))
    x, y, valid, all_valid, nv = _masked(x, y)
    if coefficient == "pearson":
        mask = None if all_valid else valid
        r = pearson_of_rows(x, y, mask, constant_rows(x, mask, nv) | constant_rows(y, mask, nv))
    else:
        gx = TieGroups(x, nv, rtol)
        gy = TieGroups(y, nv, rtol)
        const = (gx.distinct <= 1) | (gy.distinct <= 1)
        r = pearson_of_rows(gx.average_ranks(), gy.average_ranks(), None if all_valid else valid, const)
    r[nv < 2] = np.nan
    return r


def pair_count_rows(x, y, tie_threshold: float = 0.0, units=None, *, rtol: float = TIE_RTOL) -> tuple[np.ndarray, ...]:
    """Exact pair counts of every row of ``x`` and ``y`` (B, n), positions missing in either dropped.

    Returns the int arrays ``(n, P, S, Tx_all, Ty_all, Txy, distinct_x, distinct_y)`` of shape (B,): valid
    values, pairs, concordant minus discordant, pairs tied in x (both included), in y, in both, and the
    numbers of distinct values; :func:`coefficient_from_counts` turns them into any pairwise coefficient.
    ``units`` and ``rtol`` as in :func:`correlation_rows`. Counts are additive over disjoint sets of pairs.
    """
    x, y, valid, all_valid, nv = _masked(x, y)
    gx = TieGroups(x, nv, rtol)
    gy = TieGroups(y, nv, rtol)
    copies = None if units is None else copy_pairs(units, valid)
    return (*_pair_counts(gx, gy, valid, all_valid, tie_threshold, copies), gx.distinct, gy.distinct)


def coefficient_from_counts(coefficient: str, counts) -> np.ndarray:
    """A pairwise coefficient (Kendall's taus, accuracy, acc-eq, tau-eq) from :func:`pair_count_rows`.

    NaN where fewer than 2 values are valid or, for the Kendall taus, a vector is constant.
    """
    r = formula_from_counts(coefficient, *counts)
    r[np.asarray(counts[0]) < 2] = np.nan
    return r


class TieGroups:
    """Tie groups of each row of ``v`` (B, n) under the relative tie tolerance ``rtol``; invalid positions are
    NaN and sort last."""

    def __init__(self, v: np.ndarray, nv: np.ndarray, rtol: float = TIE_RTOL):
        b, n = v.shape
        self.shape = (b, n)
        order = np.argsort(v, axis=-1)
        self.flat = (order + (np.arange(b, dtype=np.intp) * n)[:, None]).ravel()
        s = v.ravel()[self.flat].reshape(b, n)
        new = np.ones((b, n), dtype=bool)
        with np.errstate(invalid="ignore"):
            hi = np.take_along_axis(s, np.maximum(nv - 1, 0)[:, None], axis=-1)  # NaN sort last
            new[:, 1:] = ~are_tied(s[:, 1:], s[:, :-1], tolerance_from_extent(hi, s[:, :1], rtol=rtol), rtol=rtol)
        self.new = new
        self.sorted = s
        self.pos = np.arange(n)
        self.start = np.maximum.accumulate(np.where(new, self.pos, 0), axis=-1)
        self.valid_sorted = self.pos < nv[:, None]
        self.dense_sorted = np.cumsum(new, axis=-1) - 1
        last = np.take_along_axis(self.dense_sorted, np.maximum(nv - 1, 0)[:, None], axis=-1)[:, 0]
        self.distinct = np.where(nv > 0, last + 1, 0)
        # pairs tied within the valid values: each value is tied with the earlier values of its group
        self.tied_pairs = np.where(self.valid_sorted, self.pos - self.start, 0).sum(axis=-1)

    def unsort(self, values_sorted: np.ndarray, dtype=None) -> np.ndarray:
        out = np.empty(self.shape[0] * self.shape[1], dtype=dtype or values_sorted.dtype)
        out[self.flat] = values_sorted.ravel()
        return out.reshape(self.shape)

    def dense_ranks(self) -> np.ndarray:
        """0-based dense ranks of the snapped values (invalid positions rank after every valid one)."""
        n = self.shape[1]
        dtype = np.int8 if n <= 127 else np.int16 if n <= 32767 else np.int32
        return self.unsort(self.dense_sorted, dtype)

    def snapped(self) -> np.ndarray:
        """Each value replaced by the first (smallest) value of its tie group; NaN stays NaN."""
        return self.unsort(np.take_along_axis(self.sorted, self.start, axis=-1))

    def average_ranks(self) -> np.ndarray:
        """1-based average ranks of the valid values (NaN at invalid positions)."""
        n = self.shape[1]
        is_last = np.ones(self.shape, dtype=bool)
        is_last[:, :-1] = self.new[:, 1:]
        end = np.minimum.accumulate(np.where(is_last, self.pos, n)[:, ::-1], axis=-1)[:, ::-1]
        ranks = np.where(self.valid_sorted, (self.start + end) / 2.0 + 1.0, np.nan)
        return self.unsort(ranks)


_TieGroups = TieGroups  # the former name, still imported by stats/mt/tie_calibration.py


def constant_rows(v, valid, nv):
    """Rows of ``v`` that are constant for Pearson's r (:func:`metaeval.stats.correlations.ties.is_constant`) over
    their ``valid`` positions (None: all); ``nv`` the number of valid values of each row."""
    if valid is not None:
        v = np.where(valid, v, np.nan)
    return is_constant(v, axis=-1) | (np.asarray(nv) <= 1)


def pearson_r(sxy, sxx, root_syy) -> np.ndarray:
    """Pearson's r from centred sums: ``sum(dx dy) / (sqrt(sum dx^2) * sqrt(sum dy^2))``, clipped to [-1, 1].

    ``root_syy`` is ``sqrt(sum dy^2)`` (callers with a fixed y compute it once). The one Pearson formula
    of metaeval: the coefficients, the resampling kernels and the power simulation call it; each caller
    decides which vectors are constant (NaN).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.clip(sxy / (np.sqrt(sxx) * root_syy), -1.0, 1.0)


def pearson_of_rows(x, y, valid, const):
    """Pearson's r of the rows; ``valid`` is None when every value is valid.

    Two-pass: each row is scaled by a power of two near its largest magnitude (exact, no rounding), then
    centred on its mean, so the sums of squares neither overflow (scores near 1e300) nor underflow
    (scores near 1e-300); r does not depend on the scale.
    """
    x = _power_of_two_scaled(x, valid)
    y = _power_of_two_scaled(y, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        if valid is None:
            dx = x - x.mean(axis=-1, keepdims=True)
            dy = y - y.mean(axis=-1, keepdims=True)
        else:
            nv = valid.sum(axis=-1, keepdims=True)
            dx = np.where(valid, x - np.where(valid, x, 0.0).sum(axis=-1, keepdims=True) / nv, 0.0)
            dy = np.where(valid, y - np.where(valid, y, 0.0).sum(axis=-1, keepdims=True) / nv, 0.0)
    r = pearson_r((dx * dy).sum(axis=-1), (dx * dx).sum(axis=-1), np.sqrt((dy * dy).sum(axis=-1)))
    r[const] = np.nan
    return r


def rescaled(v) -> np.ndarray:
    """``v`` divided by a power of two when its largest finite magnitude is outside [2^-400, 2^400].

    ``2^e`` with ``max|v| < 2^e <= 2 max|v|``: exact (no value is rounded, unless it is 2^1000 times
    smaller than the largest), so every coefficient, tie and rank is unchanged, and the products and sums
    of squares of every code path (the resampling kernels included) neither overflow nor underflow.
    Returns ``v`` itself (not a copy) in the common case.
    """
    v = np.asarray(v, dtype=np.float64)
    top = float(np.max(np.abs(v), initial=0.0, where=~np.isnan(v)))
    if not np.isfinite(top) or top == 0.0 or 2.0 ** -400 <= top <= 2.0 ** 400:
        return v
    return np.ldexp(v, -np.frexp(top)[1])


def _power_of_two_scaled(v, valid):
    """``v`` divided, row by row, by the power of two ``2^e`` with ``max|v| < 2^e <= 2 max|v|`` (rows
    without a nonzero value are left alone); exact unless a value is 2^1000 times smaller than the row's
    largest. Rows already within [2^-400, 2^400] are not touched (the common case costs one max)."""
    with np.errstate(invalid="ignore"):
        top = np.abs(v if valid is None else np.where(valid, v, 0.0)).max(axis=-1, keepdims=True)
    ok = (top <= 2.0 ** 400) & ((top >= 2.0 ** -400) | (top == 0.0))
    if bool(ok.all()):
        return v
    _, e = np.frexp(np.where(ok | ~np.isfinite(top), 1.0, top))
    return np.ldexp(v, -np.where(ok, 0, e))


# ----------------------------------------------------------------------------------------------------
# pair counts


def _pair_counts(gx: TieGroups, gy: TieGroups, valid, all_valid, t, copies=None):
    """Exact ``(n, P, S, Tx_all, Ty_all, Txy)`` per row (``Tx_all`` = pairs tied in x, both included).

    ``copies`` (per row): pairs of copies of one unit (:func:`copy_pairs`), tied in x and in y, removed
    from ``P``, ``Tx_all``, ``Ty_all`` and ``Txy``; ``S`` never counts them.
    """
    n_rows, n = gx.shape
    nv = valid.sum(axis=-1).astype(np.int64)
    pairs = nv * (nv - 1) // 2
    rx, ry = gx.dense_ranks(), gy.dense_ranks()
    xs = gx.snapped() if t > 0 else None
    if _use_pairwise(n_rows, n):
        s, untied, tx_all = _counts_pairwise(rx, ry, valid, all_valid, xs, t)
        if tx_all is None:
            tx_all = gx.tied_pairs
        txy = untied - pairs + tx_all + gy.tied_pairs  # untied = C + D = P - Tx_all - Ty_all + Txy
    else:
        s, tx_all, txy = counts_sorted(gx.flat, rx, ry, nv, xs, t, gx.tied_pairs, gy.tied_pairs)
    ty_all = gy.tied_pairs
    if copies is not None:
        pairs, tx_all, ty_all, txy = pairs - copies, tx_all - copies, ty_all - copies, txy - copies
    return nv, pairs, s, tx_all, ty_all, txy


def _use_pairwise(n_rows: int, n: int) -> bool:  # measured on numpy 2: the paths cross near n = 100
    return n <= PAIRWISE_MAX_N


def _counts_pairwise(rx, ry, valid, all_valid, xs, t):
    """Compare every pair (i, i + d) by offset d; returns S, C + D and (for t > 0) Tx_all."""
    n_rows, n = rx.shape
    a = np.ascontiguousarray((rx if xs is None else xs).T)
    b = np.ascontiguousarray(ry.T)
    v = None if all_valid else np.ascontiguousarray(valid.T)
    pos = np.zeros(n_rows, dtype=np.int64)
    neg = np.zeros(n_rows, dtype=np.int64)
    tx = None if xs is None else np.zeros(n_rows, dtype=np.int64)
    for d in range(1, n):
        if xs is None:
            sx = np.sign(a[d:] - a[:-d])
        else:
            diff = a[d:] - a[:-d]
            with np.errstate(invalid="ignore"):
                tied = np.abs(diff) <= t  # the gap rule of stats.mt.tie_calibration
                sx = (diff > 0).view(np.int8) - (diff < 0).view(np.int8)
            sx[tied] = 0
        p = sx * np.sign(b[d:] - b[:-d])
        if v is not None:
            vp = v[d:] & v[:-d]
            p *= vp
        pos += np.count_nonzero(p > 0, axis=0)
        neg += np.count_nonzero(p < 0, axis=0)
        if tx is not None:
            tx += np.count_nonzero(tied if v is None else tied & vp, axis=0)
    return pos - neg, pos + neg, tx


def tau_b(concordance, untied_x, untied_z) -> np.ndarray:
    """Kendall's tau-b from pair counts: ``S / sqrt((n_0 - T_x) (n_0 - T_z))``.

    ``concordance`` is ``S = C - D`` (concordant minus discordant pairs), ``untied_x`` / ``untied_z`` the
    pairs not tied in x / in z; NaN where either is 0 (a constant vector), clipped to [-1, 1]. One square
    root of the product: perfectly concordant counts give exactly 1. The one
    tau-b formula of metaeval: the coefficients, the resampling kernels and the analyses call it.
    """
    concordance = np.asarray(concordance, dtype=float)
    untied_x = np.asarray(untied_x, dtype=float)
    untied_z = np.asarray(untied_z, dtype=float)
    ok = (untied_x > 0) & (untied_z > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = concordance / np.sqrt(np.where(ok, untied_x * untied_z, 1.0))  # an exact product of integer counts
    return np.where(ok, np.clip(r, -1.0, 1.0), np.nan)


class _Counts:
    """Pair counts of each row: ``n`` valid values, ``P`` pairs, ``S = C - D``, ``C``, ``D``, pairs tied
    in x only / y only / both (``tx``, ``ty``, ``txy``), and ``m`` = min(distinct x, distinct y)."""

    def __init__(self, nv, pairs, s, tx_all, ty_all, txy, distinct_x, distinct_y):
        untied = pairs - tx_all - ty_all + txy  # C + D
        self.n, self.P, self.S = nv.astype(float), pairs.astype(float), s.astype(float)
        self.C, self.D = (untied + s) // 2, (untied - s) // 2
        self.tx, self.ty, self.txy = tx_all - txy, ty_all - txy, txy
        self.m = np.minimum(distinct_x, distinct_y).astype(float)
        self.constant = (distinct_x <= 1) | (distinct_y <= 1)


# name -> (formula on _Counts, whether a constant vector makes it undefined)
_COUNT_FORMULAS = {
    "kendall-a": (lambda k: k.S / k.P, True),
    "kendall-b": (lambda k: tau_b(k.S, k.P - k.tx - k.txy, k.P - k.ty - k.txy), True),
    "kendall-c": (lambda k: 2.0 * k.S / (k.n ** 2 * (k.m - 1.0) / k.m), True),
    "accuracy": (lambda k: k.C / (k.C + k.D + k.tx), False),
    "acc-eq": (lambda k: (k.C + k.txy) / k.P, False),
    "tau-eq": (lambda k: (k.C + k.txy - k.D - k.tx - k.ty) / k.P, False),
}


def formula_from_counts(coefficient, *counts):
    formula, undefined_if_constant = _COUNT_FORMULAS[coefficient]
    k = _Counts(*counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip(formula(k), -1.0, 1.0)
    if undefined_if_constant:
        r[k.constant] = np.nan
    return r
