"""Correlation levels: how the systems x inputs score matrices are turned into correlations.

``X`` holds the metric's scores and ``Z`` the human scores, each of shape ``(N systems, M inputs)``
with NaN for a missing score, optionally preceded by batch axes (resamples). ``CORR`` is any coefficient
of :mod:`metaeval.stats.correlations.coefficients`. The levels are

* ``system``: ``CORR(rowmean X, rowmean Z)``, one correlation over the N system scores;
* ``summary`` (aliases ``input``, ``segment``): ``mean_j CORR(X[:, j], Z[:, j])``, the mean over inputs of
  the correlation across systems ("grouped by item");
* ``global``: ``CORR(vec X, vec Z)`` over the cells where both are present ("no grouping");
* ``by-system``: ``mean_i CORR(X[i, :], Z[i, :])``, the mean over systems of the correlation across
  inputs ("grouped by system", as in MT segment-level meta-evaluation);
* ``partial``: ``CORR(vec (X - xbar_i), vec (Z - zbar_i))``, the partial correlation controlling for the
  system (Pagnoni et al. 2021, FRANK): each cell minus its system's mean over the cells where both are
  present, then the global correlation of those residuals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError
from metaeval.stats.correlations.coefficients import (
    canonical_coefficient,
    check_tie_threshold,
    coefficient_from_counts,
    correlation_rows,
    pair_count_rows,
)
from metaeval.stats.corpus import CorpusScores, corpus_system_means
from metaeval.stats.correlations.ties import TIE_RTOL, is_constant
from metaeval.stats.resampling.draws import count_weights
from metaeval.vocabulary import (
    LEVEL_ALIASES,
    LEVELS,
    UNDEFINED_POLICIES,
    canonical_level,
    check_undefined,
)

__all__ = ["LEVELS", "LEVEL_ALIASES", "UNDEFINED_POLICIES", "LevelCorrelation", "canonical_level", "level_correlation", "system_means",
           "system_residuals"]


ArrayOrScalar = Union[np.ndarray, np.floating, np.integer]


@dataclass(frozen=True)
class LevelCorrelation:
    """A level correlation and the counts behind it (scalars, or arrays of the batch shape).

    Attributes
    ----------
    statistic : float or numpy.ndarray
        The correlation; NaN when undefined.
    n_used : int or numpy.ndarray
        Groups that entered the statistic: systems at system level, cells at global and partial level,
        inputs at summary level and systems at by-system level (including groups counted as 0).
    n_skipped : int or numpy.ndarray
        Groups whose correlation is undefined: at summary / by-system level every group with fewer than
        2 valid pairs or a constant vector (whether left out or counted as 0); at system level the
        systems without any score; at global and partial level the cells with a human score but no
        metric score.
    n_zeroed : int or numpy.ndarray
        Undefined groups counted as 0 (``undefined='zero'``); always 0 otherwise.
    n_inputs_dropped : int or numpy.ndarray
        System level, judged-subset mode: inputs with at least one human score that were left out for
        every system because some system lacks ``x`` or ``z`` there; 0 in every other case.
    """

    statistic: ArrayOrScalar
    n_used: ArrayOrScalar
    n_skipped: ArrayOrScalar
    n_zeroed: ArrayOrScalar
    n_inputs_dropped: ArrayOrScalar


def level_correlation(
    x,
    z,
    *,
    level: str,
    coefficient: str,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    tie_threshold: float = 0.0,
    row_units=None,
    col_units=None,
    rtol: float = TIE_RTOL,
) -> LevelCorrelation:
    """Correlation between metric scores ``x`` and human scores ``z`` at one level, batched.

    Parameters
    ----------
    x : array_like, shape (..., N, Mx)
        Metric scores, systems by inputs, NaN for missing; leading axes are a batch (e.g. resamples).
    z : array_like, shape (..., N, Mz)
        Human scores; leading axes broadcast against those of ``x``. ``Mz == Mx`` unless
        ``full_test_set``.
    level : str
        ``'system'``, ``'summary'`` (or ``'input'``, ``'segment'``), ``'global'``, ``'by-system'`` or
        ``'partial'``.
    coefficient : str
        A name of :data:`metaeval.stats.correlations.coefficients.COEFFICIENTS` (or ``'kendall'``).
    undefined : {'skip', 'zero'}, optional
        Summary and by-system levels: a group with at least 2 valid pairs whose correlation is undefined
        (a constant vector) is left out of the mean (``'skip'``, default) or counted as 0 (``'zero'``).
        Groups with fewer than 2 valid pairs are always left out. Both are counted in ``n_skipped``.
    full_test_set : bool, optional
        System level only. False (default, judged subset): only cells where both ``x`` and ``z`` are
        present are used, and the inputs must be the same for every system, so an input where some
        system lacks ``x`` or ``z`` is dropped for all systems (counted in ``n_inputs_dropped``). True:
        each system's metric score is the mean over all its own present ``x`` cells (``Mx`` may exceed
        ``Mz``, e.g. the whole test set) and its human score the mean over its own present ``z`` cells.
    tie_threshold : float, optional
        Metric tie threshold of the pairwise coefficients, see
        :func:`metaeval.stats.correlations.coefficients.correlation`.
    row_units, col_units : array_like of int, shape (..., N) and (..., Mx), optional
        For resampled matrices: the original system of each row and the original input of each column
        (the bootstrap indices). A pair of two copies of one original point - one system at system and
        summary level, one input at by-system level, one cell at global level - is not a pair of the
        data, and is left out of the pair counts of the Kendall-type coefficients (see
        :func:`metaeval.stats.correlations.coefficients.correlation_rows`). None: every row / column is its own unit.
    rtol : float, optional
        The relative tie tolerance of the rank statistics (:mod:`metaeval.stats.correlations.ties`).

    Returns
    -------
    LevelCorrelation
        ``statistic``, ``n_used``, ``n_skipped``, ``n_zeroed``, ``n_inputs_dropped``: numpy scalars for
        2-D input, arrays of the batch shape otherwise.

    Raises
    ------
    ParameterError
        For an unknown level, coefficient or policy, or arrays of incompatible shapes.

    Notes
    -----
    With ``J`` the inputs used (judged subset), ``xbar_i = mean_{j in J} X_ij``:

    * system: ``CORR(xbar, zbar)`` over systems;
    * summary: ``(1 / |G|) sum_{j in G} CORR(X[:, j], Z[:, j])``, ``G`` the inputs whose correlation is
      defined (plus, under ``'zero'``, the degenerate inputs with value 0);
    * global: ``CORR(vec X, vec Z)`` over cells present in both;
    * by-system: as summary with the roles of systems and inputs exchanged;
    * partial: ``CORR(vec R_x, vec R_z)`` over the cells where both are present, with
      ``R_x[i, j] = X_ij - mean_{j' in V_i} X_ij'`` and ``V_i`` the cells of system ``i`` where both are
      present (likewise ``R_z``): the residuals of regressing each on one-hot system indicators, as in
      FRANK's evaluation script (Pagnoni et al. 2021). For Pearson this is the partial correlation
      controlling for the system; Spearman and the Kendall variants rank the residuals. A system with
      one present cell contributes the residual pair (0, 0). With bootstrap copies, every drawn copy of
      a system is centred on its own (the copies hold identical residuals), and for the Kendall-type
      coefficients the pairs of two copies of one cell are left out as at global level.

    Summary level silently averaging over different inputs for different metrics is a known pitfall:
    compare ``n_used`` / ``n_skipped`` of the metrics compared.

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. Transactions of the ACL 9, 1132-1146.
    Freitag, M. et al. (2021). Results of the WMT21 Metrics Shared Task. WMT 2021 (grouping by item /
    by system / no grouping).
    Pagnoni, A., Balachandran, V. and Tsvetkov, Y. (2021). Understanding Factuality in Abstractive
    Summarization with FRANK: A Benchmark for Factuality Metrics. NAACL 2021 (partial correlation).

    Examples
    --------
    >>> x = [[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [3.0, 3.0, 5.0]]
    >>> z = [[1.0, 1.0, 2.0], [2.0, 3.0, 1.0], [3.0, 2.0, 3.0]]
    >>> out = level_correlation(x, z, level="summary", coefficient="pearson")
    >>> round(float(out.statistic), 4), int(out.n_used), int(out.n_skipped)
    (0.3333, 3, 0)
    """
    x, z, level, coefficient, undefined, full_test_set, tie_threshold = _level_correlation_iv(
        x, z, level, coefficient, undefined, full_test_set, tie_threshold
    )
    batch = x.shape[:-2]
    if coefficient == "pdp" and level not in ("summary", "by-system"):
        coefficient = "pearson"  # PDP of one vector is Pearson's r (metaeval.stats.correlations.pdp)
    units = _pair_units(level, coefficient, x.shape, row_units, col_units)
    if level == "system":
        out = _system(x, z, coefficient, full_test_set, tie_threshold, units, rtol)
    elif level == "global":
        out = _global(x, z, coefficient, tie_threshold, units, rtol)
    elif level == "partial":
        out = _partial(x, z, coefficient, tie_threshold, units, rtol)
    else:
        if level == "summary":  # groups are the inputs: correlate columns
            x, z = np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
        out = _grouped(x, z, coefficient, undefined, tie_threshold, units, rtol)
    return LevelCorrelation(*(np.reshape(v, batch)[()] for v in out))


def _pair_units(level, coefficient, shape, row_units, col_units):
    """Which positions of the correlated vectors are copies of one drawn unit, or None (no copies).

    System level: the rows' systems, ``(B, N)``; summary level: for every input, its rows' systems,
    ``(B M, N)``; by-system level: for every system, its columns' inputs, ``(B N, M)``. Global level: the
    pair ``(row units (B, N) or None, column units (B, M) or None)``, see :func:`_global_without_copies`.
    """
    if coefficient in ("pearson", "spearman", "pdp"):
        return None
    batch, (n, m) = shape[:-2], shape[-2:]
    if level in ("global", "partial"):
        if row_units is None and col_units is None:
            return None
        return tuple(None if u is None else _rows(np.broadcast_to(np.asarray(u), batch + (size,)))
                     for u, size in ((row_units, n), (col_units, m)))
    if level in ("system", "summary"):
        if row_units is None:
            return None
        rows = np.broadcast_to(np.asarray(row_units), batch + (n,))
        return _rows(rows) if level == "system" else _rows(np.broadcast_to(rows[..., None, :], batch + (m, n)))
    if col_units is None:
        return None
    return _rows(np.broadcast_to(np.asarray(col_units)[..., None, :], batch + (n, m)))


def _level_correlation_iv(x, z, level, coefficient, undefined, full_test_set, tie_threshold):
    level = canonical_level(level)
    coefficient = canonical_coefficient(coefficient)
    undefined = check_undefined(undefined)
    if not isinstance(full_test_set, (bool, np.bool_)):
        raise ParameterError(f"`full_test_set` must be True or False; got {full_test_set!r}.")
    full_test_set = bool(full_test_set)
    if full_test_set and level != "system":
        raise ParameterError(
            f"`full_test_set` must be False at level {level!r} (it applies to the system level); got True."
        )
    tie_threshold = check_tie_threshold(tie_threshold, coefficient)
    z = np.asarray(z, dtype=np.float64)
    if isinstance(x, CorpusScores):
        check_corpus_level(x, z, level, full_test_set)
        return x, z, level, coefficient, undefined, full_test_set, tie_threshold
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ParameterError(f"`x` must be an array of shape (..., systems, inputs); got shape {x.shape}.")
    n, m = x.shape[-2:]
    expected = f"(..., {n}, {'M' if full_test_set else m})"
    try:
        if z.ndim < 2 or z.shape[-2] != n or (not full_test_set and z.shape[-1] != m):
            raise ValueError
        batch = np.broadcast_shapes(x.shape[:-2], z.shape[:-2])
    except ValueError:
        raise ParameterError(f"`z` must have shape {expected} to match `x`; got shape {z.shape}.") from None
    x = np.broadcast_to(x, batch + x.shape[-2:])
    z = np.broadcast_to(z, batch + z.shape[-2:])
    return x, z, level, coefficient, undefined, full_test_set, tie_threshold


def check_corpus_level(x: CorpusScores, z: np.ndarray, level: str, full_test_set: bool) -> None:
    """A corpus metric has system scores only, and its statistics cover the systems x inputs of ``z``."""
    if level != "system":
        raise ParameterError(f"`level` must be 'system' for a corpus metric (its scores exist per system, not "
                             f"per cell); got {level!r}.")
    n, m = x.shape
    if z.ndim != 2 or z.shape[0] != n or (not full_test_set and z.shape[1] != m):
        raise ParameterError(f"`z` must have shape ({n}, {'M' if full_test_set else m}) to match the corpus "
                             f"statistics; got shape {z.shape}.")


def _rows(a: np.ndarray) -> np.ndarray:
    return np.reshape(a, (int(np.prod(a.shape[:-1])), a.shape[-1]))


def system_means(x, z, *, full_test_set: bool = False):
    """The system scores the system level correlates: ``(xbar, zbar, n_inputs_dropped)``.

    Judged-subset mode (default): both are averaged over the same inputs, those where every system has
    both ``x`` and ``z``; ``n_inputs_dropped`` counts the inputs with a human score left out because some
    system lacks one of the two there. Full-test-set mode (Deutsch, Dror & Roth 2022): ``x`` over every
    input it scored, ``z`` over every judged input, per system. The one system-mean computation of
    metaeval: the levels, the kernels and the report's system tables use it.
    """
    if isinstance(x, CorpusScores):
        return corpus_system_means(x, z, full_test_set=full_test_set)
    vx, vz = np.isfinite(x), np.isfinite(z)
    if full_test_set:
        cx, cz = vx.sum(axis=-1), vz.sum(axis=-1)
        dropped = np.zeros(x.shape[:-2], dtype=np.int64)
    else:
        vx = vz = vx & vz
        used = vx.all(axis=-2, keepdims=True)  # inputs complete for every system
        dropped = (np.isfinite(z).any(axis=-2) & ~used[..., 0, :]).sum(axis=-1)
        vx = vz = np.broadcast_to(used, x.shape)
        cx = cz = vx.sum(axis=-1)
    return _mean(x, vx, cx), _mean(z, vz, cz), dropped


def pearson_constant(xbar, zbar) -> np.ndarray:
    """Where Pearson's r of the rows of ``xbar`` and ``zbar`` is undefined because either is constant on their
    common finite entries (:func:`metaeval.stats.correlations.ties.is_constant`)."""
    both = np.isfinite(xbar) & np.isfinite(zbar)
    return is_constant(np.where(both, xbar, np.nan)) | is_constant(np.where(both, zbar, np.nan))


def _reference_value(v):
    """A value within the range of the finite values of ``v`` along its last two axes (their midrange; 0 where
    none is finite), shaped to broadcast against ``v``."""
    finite = np.isfinite(v)
    w = np.where(finite, v, np.nan)
    with np.errstate(invalid="ignore", over="ignore"):
        hi = np.fmax.reduce(np.fmax.reduce(w, axis=-1, keepdims=True), axis=-2, keepdims=True)
        lo = np.fmin.reduce(np.fmin.reduce(w, axis=-1, keepdims=True), axis=-2, keepdims=True)
        mid = lo + (hi / 2.0 - lo / 2.0)
    return np.where(np.isfinite(mid), mid, 0.0)


def centred_system_means(x, z, *, full_test_set: bool = False):
    """:func:`system_means` of ``x - c_x`` and ``z - c_z``, ``c`` a value within the range of each matrix.

    Pearson's r of system means does not change under a common shift, but the means of large values lose
    their low digits when summed (at an offset of 1e10 the float spacing is 2e-6): centring first, with
    differences that are exact for values within a factor of two of ``c``, keeps them. A corpus metric's
    system scores are computed whole and only shifted after.
    """
    if isinstance(x, CorpusScores):
        xbar, zbar, _ = system_means(x, z, full_test_set=full_test_set)
        return xbar - _reference_value(xbar[..., None])[..., 0], zbar - _reference_value(zbar[..., None])[..., 0]
    xbar, zbar, _ = system_means(x - _reference_value(x), z - _reference_value(z), full_test_set=full_test_set)
    return xbar, zbar


def _mean(v, valid, count, keepdims=False):
    """Mean of the ``valid`` values of ``v`` along the last axis (NaN where ``count`` is 0).

    The plain sum, as numpy computes it; rows whose sum overflows (finite values near the float limit)
    are summed again divided by a power of two near their largest magnitude, so the mean of finite values
    is always finite (no "overflow encountered in reduce").
    """
    w = np.where(valid, v, 0.0)
    count = np.asarray(count)
    if count.ndim < w.ndim:
        count = count[..., None]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        total = w.sum(axis=-1, keepdims=True)
        bad = ~np.isfinite(total)
        if bad.any():
            _, e = np.frexp(np.where(bad, np.abs(w).max(axis=-1, keepdims=True), 1.0))
            total = np.where(bad, np.ldexp(w, -e).sum(axis=-1, keepdims=True), total)
            mean = np.ldexp(total / count, np.where(bad, e, 0))
        else:
            mean = total / count
    return mean if keepdims else mean[..., 0]


def system_residuals(x, z):
    """``(R_x, R_z)``: ``x`` and ``z`` minus their system's mean over the cells where both are present.

    Cells where either is missing are NaN in both. The one residual computation of the partial level
    (see :func:`level_correlation`); batched over leading axes.
    """
    valid = np.isfinite(x) & np.isfinite(z)
    count = valid.sum(axis=-1, keepdims=True)
    xbar = _mean(x, valid, count, keepdims=True)
    zbar = _mean(z, valid, count, keepdims=True)
    return np.where(valid, x - xbar, np.nan), np.where(valid, z - zbar, np.nan)


def _system(x, z, coefficient, full_test_set, tie_threshold, units, rtol):
    n_systems = x.shape[-2]
    xbar, zbar, dropped = system_means(x, z, full_test_set=full_test_set)
    if coefficient == "pearson":  # shift-invariant: from centred means (constancy: of the means themselves)
        xc, zc = centred_system_means(x, z, full_test_set=full_test_set)
        r = correlation_rows(_rows(xc), _rows(zc), coefficient, tie_threshold, units, rtol=rtol)
        r = np.where(pearson_constant(xbar, zbar), np.nan, r)
    else:
        r = correlation_rows(_rows(xbar), _rows(zbar), coefficient, tie_threshold, units, rtol=rtol)
    n_used = (np.isfinite(xbar) & np.isfinite(zbar)).sum(axis=-1)
    zeros = np.zeros_like(n_used)
    return r, n_used, n_systems - n_used, zeros, dropped


def _global(x, z, coefficient, tie_threshold, units, rtol):
    batch = x.shape[:-2]
    xv = np.reshape(x, batch + (-1,))
    zv = np.reshape(z, batch + (-1,))
    if units is None:
        r = correlation_rows(_rows(xv), _rows(zv), coefficient, tie_threshold, rtol=rtol)
    else:
        r = _global_without_copies(x, z, coefficient, tie_threshold, *units, rtol)
    fx, fz = np.isfinite(xv), np.isfinite(zv)
    n_used = (fx & fz).sum(axis=-1)
    skipped = (fz & ~fx).sum(axis=-1)
    zeros = np.zeros_like(n_used)
    return r, n_used, skipped, zeros, zeros


def _partial(x, z, coefficient, tie_threshold, units, rtol):
    """The global level of the within-system residuals; ``n_skipped`` as at global level."""
    r, n_used, _, zeros, _ = _global(*system_residuals(x, z), coefficient, tie_threshold, units, rtol)
    skipped = (np.isfinite(z) & ~np.isfinite(x)).sum(axis=(-2, -1))
    return r, n_used, skipped, zeros, zeros


def _grouped(x, z, coefficient, undefined, tie_threshold, units, rtol):
    """Mean over the groups (rows of the last two axes) of the correlation along the last axis (PDP: the
    groups' pairs pooled, :mod:`metaeval.stats.correlations.pdp`)."""
    groups = x.shape[-2]
    if coefficient == "pdp":
        from metaeval.stats.correlations.pdp import group_sums, pooled

        n_used = (group_sums(x, z)[3] >= 2).sum(axis=-1)
        return pooled(x, z), n_used, groups - n_used, np.zeros_like(n_used), np.zeros_like(n_used)
    r = correlation_rows(_rows(x), _rows(z), coefficient, tie_threshold, units, rtol=rtol).reshape(x.shape[:-1])
    defined = ~np.isnan(r)
    n_defined = defined.sum(axis=-1)
    if undefined == "zero":
        enough = (np.isfinite(x) & np.isfinite(z)).sum(axis=-1) >= 2
        n_zeroed = (~defined & enough).sum(axis=-1)
    else:
        n_zeroed = np.zeros_like(n_defined)
    n_used = n_defined + n_zeroed
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(n_used > 0, np.where(defined, r, 0.0).sum(axis=-1) / n_used, np.nan)
    return stat, n_used, groups - n_defined, n_zeroed, np.zeros_like(n_defined)


def _multiplicities(units: np.ndarray) -> np.ndarray:
    """For every position of ``units`` (B, n), how many positions of its row hold the same unit."""
    counts = count_weights(units, int(units.max()) + 1)
    return np.take_along_axis(counts, units, axis=-1)


def _global_without_copies(x, z, coefficient, tie_threshold, row_units, col_units, rtol):
    """Global level of resampled matrices, without the pairs of two different copies of one system or input.

    Cells ``(r, c)`` and ``(r', c')`` of a resample form a pair of the data unless ``r != r'`` are copies of
    one system or ``c != c'`` copies of one input. The excluded pairs are counted from the rows and the
    columns: two copies of a row with ``V`` valid cells and pair counts ``K`` form ``2 K + V`` pairs (each
    pair of the row twice, and ``V`` pairs of identical cells, tied in both); a position in a row drawn ``w``
    times carries ``(w - 1) / 2`` of them. Pairs that are both (identical cells) are counted once:
    ``(w - 1)(c - 1) / 2`` per valid position.
    """
    n, m = x.shape[-2:]
    x3, z3 = np.reshape(x, (-1, n, m)), np.reshape(z, (-1, n, m))
    b = x3.shape[0]
    counts = np.array(pair_count_rows(x3.reshape(b, n * m), z3.reshape(b, n * m), tie_threshold, rtol=rtol),
                      dtype=np.float64)
    tied_fields = [1, 3, 4, 5]  # P, Tx_all, Ty_all, Txy: identical cells are pairs tied in both
    share = {}
    for axis, units in ((1, row_units), (2, col_units)):
        if units is None:
            continue
        xs, zs = (x3, z3) if axis == 1 else (x3.transpose(0, 2, 1), z3.transpose(0, 2, 1))
        k, length = xs.shape[1], xs.shape[2]
        per = np.array(pair_count_rows(xs.reshape(b * k, length), zs.reshape(b * k, length), tie_threshold, rtol=rtol),
                       dtype=np.float64).reshape(8, b, k)
        extra = _multiplicities(units).astype(np.float64) - 1.0  # copies of the same unit besides this one
        share[axis] = extra
        counts[2] -= (extra * per[2]).sum(axis=1)
        for f in tied_fields:
            counts[f] -= (extra * (per[f] + per[0] / 2.0)).sum(axis=1)
    if len(share) == 2:
        valid = np.isfinite(x3) & np.isfinite(z3)
        both = (valid * share[1][:, :, None] * share[2][:, None, :]).sum(axis=(1, 2)) / 2.0
        for f in tied_fields:
            counts[f] += both
    return coefficient_from_counts(coefficient, tuple(np.round(counts).astype(np.int64)))
