"""Point estimates of many metrics at once, bitwise equal to :func:`metaeval.stats.correlations.levels.level_correlation`."""
from __future__ import annotations

import functools

import numpy as np

from metaeval.stats.correlations import coefficients as _coef
from metaeval.stats.correlations import levels as _levels
from metaeval.stats.kernels.ranks import rank_pair_signs, tie_ranks, upper_pairs
from metaeval.stats.kernels.rows import all_finite
from metaeval.stats.correlations.ties import TIE_RTOL

# ----------------------------------------------------------------------------------------------------
# point estimates


def point_correlation(x, z, *, level, coefficient, undefined="skip", full_test_set=False, tie_threshold=0.0,
                      rtol=TIE_RTOL):
    """:func:`metaeval.stats.correlations.levels.level_correlation` of validated 2-D ``x`` and ``z``, bitwise equal.

    See :func:`point_correlations`.
    """
    return point_correlations([x], z, level=level, coefficient=coefficient, undefined=undefined,
                              full_test_set=full_test_set, tie_threshold=tie_threshold, rtol=rtol)[0]


def point_correlations(xs, z, *, level, coefficient, undefined="skip", full_test_set=False, tie_threshold=0.0,
                       rtol=TIE_RTOL):
    """``[level_correlation(x, z) for x in xs]`` for validated 2-D arrays of one shape, bitwise equal.

    For complete data, Pearson and Kendall tau-b at the system and summary levels (Kendall: at most
    :data:`coefficients.PAIRWISE_MAX_N` systems) the statistics are computed here, all metrics at once:
    the same system means, tie groups, sums and formulas as :mod:`metaeval.stats.correlations.levels` and
    :mod:`metaeval.stats.correlations.coefficients`, with Kendall's pairs counted by one comparison of the dense
    ranks of all vectors (the same integers as the coefficients' loop over offsets). Every other case
    calls ``level_correlation``. ``rtol``: the relative tie tolerance.
    """
    n, m = z.shape
    fast = (all(isinstance(x, np.ndarray) for x in xs) and coefficient in ("kendall-b", "pearson") and level in ("system", "summary") and not full_test_set
            and not tie_threshold and 2 <= n and all(x.shape == z.shape for x in xs) and all_finite(z, *xs)
            and (coefficient == "pearson" or n <= _coef.PAIRWISE_MAX_N))
    if not fast:
        return [_levels.level_correlation(x, z, level=level, coefficient=coefficient, undefined=undefined,
                                          full_test_set=full_test_set, tie_threshold=tie_threshold, rtol=rtol) for x in xs]
    rows = functools.partial(_kendall_b_rows, rtol=rtol) if coefficient == "kendall-b" else _pearson_rows
    k = len(xs)
    if level == "system":  # levels._system on complete data
        xbar = np.stack([_levels.system_means(x, z)[0] for x in xs])
        zbar = _levels.system_means(xs[0], z)[1]
        if coefficient == "pearson":  # as levels._system: centred means, constancy of the means
            xc = np.stack([_levels.centred_system_means(x, z)[0] for x in xs])
            zc = _levels.centred_system_means(xs[0], z)[1]
            r = np.where(_levels.pearson_constant(xbar, np.broadcast_to(zbar, xbar.shape)), np.nan,
                         rows(xc, np.broadcast_to(zc, xc.shape)))
        else:
            r = rows(xbar, np.broadcast_to(zbar, xbar.shape))
        zero = np.int64(0)
        return [_levels.LevelCorrelation(r[i], np.int64(n), np.int64(0), zero, zero) for i in range(k)]
    # levels._grouped over the inputs (columns): one row per (metric, input)
    if coefficient == "kendall-b":  # integer counts: any layout
        zt = np.ascontiguousarray(z.T)
        r = rows(np.concatenate([np.ascontiguousarray(x.T) for x in xs]), np.concatenate([zt] * k)).reshape(k, m)
    else:  # the sums of the generic path run over the transposed views: same strides, same rounding
        r = [_pearson_rows(x.T, z.T, contiguous=False) for x in xs]
    out = []
    for ri in r:
        defined = ~np.isnan(ri)
        n_defined = defined.sum(axis=-1)
        n_zeroed = (~defined).sum(axis=-1) if undefined == "zero" else np.zeros_like(n_defined)
        n_used = n_defined + n_zeroed
        with np.errstate(invalid="ignore", divide="ignore"):
            stat = np.where(n_used > 0, np.where(defined, ri, 0.0).sum(axis=-1) / n_used, np.nan)
        fields = (stat, n_used, m - n_defined, n_zeroed, np.zeros_like(n_defined))
        out.append(_levels.LevelCorrelation(*(np.asarray(v)[()] for v in fields)))
    return out


def _kendall_b_rows(x: np.ndarray, y: np.ndarray, rtol=TIE_RTOL) -> np.ndarray:
    """Kendall tau-b of the rows of complete ``x``, ``y`` (B, n), 2 <= n <= PAIRWISE_MAX_N, as
    :func:`coefficients.correlation_rows` computes it (same tie groups, counts and formula)."""
    b, n = x.shape
    nv = np.full(b, n, dtype=np.int64)
    rx, tx = tie_ranks(x, rtol=rtol)
    ry, ty = tie_ranks(y, rtol=rtol)
    first, second = upper_pairs(n)
    prod = rank_pair_signs(rx, first, second) * rank_pair_signs(ry, first, second)  # (P, B)
    pos = np.count_nonzero(prod > 0, axis=0)
    neg = np.count_nonzero(prod < 0, axis=0)
    pairs = nv * (nv - 1) // 2
    txy = (pos + neg) - pairs + tx + ty  # C + D = P - Tx_all - Ty_all + Txy
    return _coef.formula_from_counts("kendall-b", nv, pairs, pos - neg, tx, ty, txy,
                              rx.max(axis=1).astype(np.int64) + 1, ry.max(axis=1).astype(np.int64) + 1)


def _pearson_rows(x: np.ndarray, y: np.ndarray, contiguous: bool = True) -> np.ndarray:
    """Pearson's r of the rows of complete ``x``, ``y`` (B, n), n >= 2, as
    :func:`coefficients.correlation_rows` computes it (on these arrays, or C-contiguous copies)."""
    if contiguous:
        x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    nv = np.full(x.shape[0], x.shape[1])
    return _coef.pearson_of_rows(x, y, None, _coef.constant_rows(x, None, nv) | _coef.constant_rows(y, None, nv))
