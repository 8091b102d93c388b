"""Row-wise coefficients of complete vectors (Pearson, Kendall tau-b) and per-input aggregation."""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations import coefficients as _coef
from metaeval.stats.kernels.ranks import (
    cached_index,
    fixed_pair_signs,
    rank_pair_signs,
    row_pair_signs,
    row_ranks,
    upper_pairs,
)
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["PAIRWISE_SYSTEMS_MAX", "all_finite", "fixed_pearson", "kendall_b_rows", "kendall_b_weighted",
           "linear_sums", "mean_over_inputs", "pearson_rows", "system_correlation", "tau_b_from_ties",
           "weighted_mean_over_inputs"]


def mean_over_inputs(stat: np.ndarray, undefined: str) -> np.ndarray:
    """Mean over the last axis of per-input statistics, ``undefined`` as in ``level_correlation``."""
    stat = np.ascontiguousarray(stat)  # the summation order of a strided reduction depends on the shape
    ok = ~np.isnan(stat)
    total = np.where(ok, stat, 0.0).sum(axis=-1)
    if undefined == "skip":
        n = ok.sum(axis=-1)
    else:
        n = np.full(total.shape, stat.shape[-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def weighted_mean_over_inputs(stat: np.ndarray, weights: np.ndarray, undefined: str) -> np.ndarray:
    """Count-weighted mean of per-input statistics ``stat`` (b, M) with multiplicities ``weights`` (b, M)."""
    stat = np.ascontiguousarray(stat)
    ok = ~np.isnan(stat)
    total = (np.where(ok, stat, 0.0) * weights).sum(axis=-1)
    n = (weights * ok).sum(axis=-1) if undefined == "skip" else weights.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def tau_b_from_ties(num: np.ndarray, n0: float, tx: np.ndarray, tz: np.ndarray) -> np.ndarray:
    """tau-b (:func:`metaeval.stats.correlations.coefficients.tau_b`) from ``n0`` pairs, ``tx`` / ``tz`` of them tied."""
    return _coef.tau_b(num, n0 - tx, n0 - tz)


#: Up to this many systems the system-level Kendall tau-b of resampled means uses the pairwise sign kernel.
PAIRWISE_SYSTEMS_MAX = 64

def kendall_b_rows(xm: np.ndarray, zm: np.ndarray, z_signs=None, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """Kendall tau-b of every row of ``xm`` (b, n) with ``zm`` ((b, n), or (n,) for one fixed vector).

    Exact integer pair counts over the tie groups of :mod:`metaeval.stats.correlations.coefficients` (see
    :func:`row_ranks`): the numbers of :func:`coefficients.correlation`. ``z_signs`` may pass
    :func:`fixed_pair_signs` of a fixed ``zm`` computed once. ``rtol``: the relative tie tolerance.
    """
    b, n = xm.shape
    sx, near, tied = row_pair_signs(xm, rtol=rtol)
    tx = np.zeros(b, dtype=np.int64)
    tx[near] = tied
    if z_signs is None and zm.ndim == 1:
        z_signs = fixed_pair_signs(zm, rtol=rtol)
    if z_signs is not None:
        sz, tz = z_signs
    else:
        sz, near, tied = row_pair_signs(zm, rtol=rtol)
        tz = np.zeros(b, dtype=np.int64)
        tz[near] = tied
    num = np.add.reduce(sx * sz, axis=0, dtype=np.int32)
    return tau_b_from_ties(num, n * (n - 1) / 2.0, tx, tz)


def kendall_b_weighted(xm: np.ndarray, zm: np.ndarray, w: np.ndarray, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """Kendall tau-b of bootstrap resamples given as system multiplicities: row ``s`` holds ``w[s, a]``
    copies of system ``a`` with scores ``xm[s, a]`` and ``zm[s, a]`` (b, n each).

    With ``ww = w_a w_b`` over the pairs ``a < b`` of distinct systems, the numerator is
    ``sum ww S_x S_z``. The pairs tied in x are ``(sum_g W_g^2 - n) / 2`` over the tie groups ``g`` of the
    distinct systems, ``W_g`` the number of resampled systems in the group (copies of one system are
    tied; without ties in x this is ``sum_a C(w_a, 2)``): the counts of the resampled vectors.
    """
    b, n = xm.shape
    first, second = upper_pairs(n)
    ranks, near, _ = row_ranks(np.concatenate([xm, zm]), rtol=rtol)  # x and z ranked in one pass
    signs = rank_pair_signs(ranks, first, second)  # (P, 2b)
    wt = w.T.astype(np.int8 if w.max() <= 11 else np.int16)  # products ww S_x S_z fit the type
    prod = np.multiply(signs[:, :b], signs[:, b:], dtype=wt.dtype)
    prod *= wt[first]
    prod *= wt[second]
    num = np.add.reduce(prod, axis=0, dtype=np.int32)
    base = (np.add.reduce(w * w, axis=1) - n) / 2.0  # pairs of copies of one system
    ties = np.concatenate([base, base])
    if near.size:  # (sum over tie groups of W_g^2 - n) / 2
        groups = (np.arange(near.size)[:, None] * n + ranks[near]).ravel()
        wg = np.bincount(groups, weights=w[near % b].ravel(), minlength=near.size * n)
        ties[near] = (np.add.reduce((wg * wg).reshape(near.size, n), axis=1) - n) / 2.0
    return tau_b_from_ties(num, n * (n - 1) / 2.0, ties[:b], ties[b:])

def system_correlation(xm: np.ndarray, zm: np.ndarray, coefficient: str, tie_threshold: float,
                       z_signs=None, z_fixed=None, units=None, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """Correlation of each row of resampled system scores ``xm`` (b, N) with ``zm`` ((b, N) or (N,)).

    Kendall tau-b for small N from pair signs (:func:`kendall_b_rows`), Pearson with the formula of
    :mod:`metaeval.stats.correlations.coefficients` without its checks for missing values, everything else through
    :func:`coefficients.correlation_rows`. ``units`` (b, N): the drawn system of every position, whose
    copies' pairs the pair counts leave out (tau-b does not depend on them). ``rtol``: the relative tie tolerance.
    """
    n = xm.shape[-1]
    if coefficient == "kendall-b" and not tie_threshold and n <= PAIRWISE_SYSTEMS_MAX:
        return kendall_b_rows(xm, zm, z_signs, rtol=rtol)
    if coefficient == "pearson" and n >= 2:
        return pearson_rows(xm, zm, z_fixed)
    zb = np.broadcast_to(zm, xm.shape)
    return _coef.correlation_rows(np.ascontiguousarray(xm), np.ascontiguousarray(zb), coefficient, tie_threshold,
                                  units, rtol=rtol)


def pearson_rows(xm: np.ndarray, zm: np.ndarray, z_fixed=None) -> np.ndarray:
    """Pearson's r of every row of complete ``xm`` (b, n) with ``zm`` ((b, n) or (n,)), n >= 2.

    ``sum(dx dz) / (sqrt(sum dx^2) sqrt(sum dz^2))`` with every sum along a contiguous row (the same
    summation for any batch), NaN where ``xm`` or ``zm`` is constant (a single tie group). ``z_fixed``
    may pass :func:`fixed_pearson` of a fixed ``zm`` computed once.
    """
    b, n = xm.shape
    xm = np.ascontiguousarray(xm)
    dx = xm - np.add.reduce(xm, axis=1, keepdims=True) / n
    const = _coef.constant_rows(xm, None, cached_index(("full", b, n), lambda: np.full(b, n)))
    if zm.ndim == 1:
        dz, den, z_const = fixed_pearson(zm) if z_fixed is None else z_fixed
        if z_const:
            const[:] = True
    else:
        zm = np.ascontiguousarray(zm)
        dz = zm - np.add.reduce(zm, axis=1, keepdims=True) / n
        const |= _coef.constant_rows(zm, None, cached_index(("full", b, n), lambda: np.full(b, n)))
        den = np.sqrt(np.add.reduce(dz * dz, axis=1))
    r = _coef.pearson_r(np.add.reduce(dx * dz, axis=1), np.add.reduce(dx * dx, axis=1), den)
    r[const] = np.nan
    return r


def fixed_pearson(zm: np.ndarray):
    """``(zm - mean, sqrt(sum of squares), constant)`` of one vector, for :func:`pearson_rows`."""
    n = zm.shape[0]
    dz = zm - np.add.reduce(zm) / n
    return dz, np.sqrt(np.add.reduce(dz * dz)), bool(_coef.constant_rows(zm[None], None, np.array([n]))[0])


def linear_sums(bits: np.ndarray, lin_t: np.ndarray) -> np.ndarray:
    """``sum_a m[j, s, a] * lin_t[j, a, k]`` -> (b, M, K) for input-major cell masks ``bits`` (M, b, N).

    One two-operand ``einsum`` per component: a fixed summation order (batch-size invariant) and, unlike
    a three-index ``einsum``, fast.
    """
    return np.stack([np.einsum("jbn,jn->bj", bits, np.ascontiguousarray(lin_t[..., k]))
                     for k in range(lin_t.shape[-1])], axis=-1)


def all_finite(*arrays: np.ndarray) -> bool:
    return all(bool(np.isfinite(a).all()) for a in arrays)
