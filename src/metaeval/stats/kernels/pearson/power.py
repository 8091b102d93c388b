"""Fused Pearson kernels for the power simulation: both metrics, both levels, one trial at a time.

The power simulation runs 2 resampling tests x 2 levels x 11 proportions x 1000 trials on fresh draws,
so it evaluates the statistics of X and Y together from one set of products per trial:

* PERM-BOTH (swap bits ``B``, ``(M, k, N)``): system means are linear in the bits,
  ``xbar'_a = xbar_a + (1/M) sum_b B_ab (Y_ab - X_ab)``; per input, the sums of ``X'``, ``X'^2`` and
  ``X' z`` are linear in the bits: one batched matrix product ``B @ L`` with ``L`` of shape ``(M, N, 3)``
  (the formulas of :class:`metaeval.stats.kernels.permutation.PearsonSummaryShared`).
* BOOT-BOTH (system multiplicities ``w``, input multiplicities ``c``): resampled system means are
  ``c @ X^T / M`` and a Pearson correlation over a resample with duplicated systems is the
  ``w``-weighted one; per input, the ``w``-weighted moments of X, Y and Z come from one product
  ``w @ [X, Y, Z, X^2, Y^2, Z^2, XZ, YZ]``.

They compute the numbers of the generic path (:func:`metaeval.stats.significance.permutation.permutation_deltas`,
:func:`metaeval.stats.resampling.bootstrap.bootstrap_samples`) to rounding (``tests/test_analyses_power.py``), with
its rule of constancy (:func:`metaeval.stats.correlations.ties.is_constant`: ``max v - min v <= 2^-46 max|v|``, the
correlation undefined). The moment sums cannot decide it near 0, so resampled vectors whose variance per
point is within ``(2e-7 max|v|)^2`` (a bound far above both a constant vector's variance and the rounding
of the sums) are recomputed from their values, two-pass (:func:`_pearson_rows`): rare, near-copies of one
value.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import pearson_r
from metaeval.stats.kernels.rows import mean_over_inputs, weighted_mean_over_inputs
from metaeval.stats.correlations.ties import is_constant

__all__ = ["perm_pearson", "boot_pearson"]

SCREEN_RTOL = 2e-7
"""Resampled vectors with a variance per point within ``(SCREEN_RTOL max|v|)^2`` are recomputed from their values."""


def _pearson_rows(u: np.ndarray, v: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Pearson correlation of every row of ``u`` with ``v`` (rows, or one vector), optionally weighted
    (multiplicities: a zero weight leaves the point out); NaN where either is constant (``is_constant``)."""
    n = u.shape[-1]
    w = np.ones(n) if weights is None else weights
    total = w.sum(axis=-1, keepdims=True)
    uc = u - (w * u).sum(axis=-1, keepdims=True) / total
    vc = v - (w * v).sum(axis=-1, keepdims=True) / total
    suu = (w * uc * uc).sum(axis=-1)
    svv = (w * vc * vc).sum(axis=-1)
    suv = (w * uc * vc).sum(axis=-1)
    # a constant vector (is_constant) has a variance far within the screen; only the rows within it are tested
    shape = np.broadcast_shapes(u.shape, v.shape)
    near = (suu <= total[..., 0] * (SCREEN_RTOL * np.abs(u).max(axis=-1)) ** 2)
    near = near | (svv <= total[..., 0] * (SCREEN_RTOL * np.abs(v).max(axis=-1)) ** 2)
    bad = np.zeros(shape[:-1], dtype=bool)
    if near.any():
        rows = np.nonzero(np.broadcast_to(near, bad.shape))
        ub, vb = np.broadcast_to(u, shape)[rows], np.broadcast_to(v, shape)[rows]
        if weights is not None:
            chosen = np.broadcast_to(weights > 0, shape)[rows]
            ub, vb = np.where(chosen, ub, np.nan), np.where(chosen, vb, np.nan)
        bad[rows] = is_constant(ub, axis=-1) | is_constant(vb, axis=-1)
    r = pearson_r(suv, np.where(bad, 1.0, suu), np.sqrt(np.where(bad, 1.0, svv)))
    return np.where(bad, np.nan, r)


def perm_pearson(xs: np.ndarray, ys: np.ndarray, z: np.ndarray, bits: np.ndarray, level: str):
    """``(r(X', Z), r(Y', Z))`` for every swap mask, each ``(k,)``; ``bits`` is ``(M, k, N)``, 1 = swap."""
    n, m = xs.shape
    bf = bits if bits.dtype == np.float64 else bits.astype(np.float64)
    if level == "system":
        xbar, ybar = xs.mean(axis=1), ys.mean(axis=1)
        shift = np.einsum("jbn,jn->bn", bf, np.ascontiguousarray((ys - xs).T)) / m
        xp = xbar + shift
        yp = xbar + ybar - xp
        zbar = z.mean(axis=1)
        return _pearson_rows(xp, zbar), _pearson_rows(yp, zbar)
    zc = z - z.mean(axis=0)
    znorm = np.sqrt((zc * zc).sum(axis=0))
    z_const = is_constant(z, axis=0)
    zt = np.where(z_const, 0.0, zc / np.where(z_const, 1.0, znorm))
    centre = (xs.mean(axis=0) + ys.mean(axis=0)) / 2.0
    xc, yc = xs - centre, ys - centre
    d = yc - xc
    lin = np.ascontiguousarray(np.stack([d, yc * yc - xc * xc, d * zt], axis=2).transpose(1, 0, 2))  # (M, N, 3)
    s = np.matmul(bf, lin)  # (M, k, 3)
    top = np.maximum(np.abs(xs).max(axis=0), np.abs(ys).max(axis=0))  # (M,)
    scale = n * (SCREEN_RTOL * top) ** 2  # (M,)
    out = []
    for sign, base in ((1.0, (xc.sum(0), (xc * xc).sum(0), (xc * zt).sum(0))),
                       (-1.0, (yc.sum(0), (yc * yc).sum(0), (yc * zt).sum(0)))):
        s1 = base[0][:, None] + sign * s[..., 0]
        s2 = base[1][:, None] + sign * s[..., 1]
        sz = base[2][:, None] + sign * s[..., 2]
        v = s2 - s1 * s1 / n
        near = (v <= scale[:, None]) & ~z_const[:, None]  # (M, k): decided from the values
        bad = near | z_const[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(sz / np.sqrt(np.where(bad, 1.0, v)), -1.0, 1.0)
        r = np.where(bad, np.nan, r)
        if near.any():
            col, res = np.nonzero(near)
            keep, swap = (xs, ys) if sign > 0 else (ys, xs)
            values = np.where(bits[col, res] != 0, swap[:, col].T, keep[:, col].T)  # (K, N)
            r[col, res] = _pearson_rows(values, z[:, col].T)
        out.append(mean_over_inputs(r.T, "skip"))
    return out[0], out[1]


def boot_pearson(x: np.ndarray, y: np.ndarray, z: np.ndarray, draws, level: str):
    """``(r(X*, Z*), r(Y*, Z*))`` for every BOOT-BOTH resample of ``draws``, each ``(k,)``."""
    n, m = x.shape
    w = draws.row_weights().astype(np.float64)  # (k, N)
    c = draws.col_weights().astype(np.float64)  # (k, M)
    if level == "system":
        means = (c @ np.concatenate([x, y, z], axis=0).T) / m  # (k, 3N)
        xm, ym, zm = means[:, :n], means[:, n:2 * n], means[:, 2 * n:]
        return _pearson_rows(xm, zm, w), _pearson_rows(ym, zm, w)
    xc, yc, zc = (v - v.mean(axis=0) for v in (x, y, z))
    moments = np.concatenate([xc, yc, zc, xc * xc, yc * yc, zc * zc, xc * zc, yc * zc], axis=1)  # (N, 8M)
    s = (w @ moments).reshape(w.shape[0], 8, m) / n
    mx, my, mz = s[:, 0], s[:, 1], s[:, 2]
    vz = s[:, 5] - mz * mz
    near_z = vz <= (SCREEN_RTOL * np.abs(z).max(axis=0)) ** 2  # (k, M): decided from the values
    out = []
    for mv, sv, sc, values in ((mx, s[:, 3], s[:, 6], x), (my, s[:, 4], s[:, 7], y)):
        v = sv - mv * mv
        near = near_z | (v <= (SCREEN_RTOL * np.abs(values).max(axis=0)) ** 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip((sc - mv * mz) / np.sqrt(np.where(near, 1.0, v * vz)), -1.0, 1.0)
        r = np.where(near, np.nan, r)
        if near.any():
            res, col = np.nonzero(near)
            r[res, col] = _pearson_rows(values[:, col].T, z[:, col].T, w[res])
        out.append(weighted_mean_over_inputs(r, c, "skip"))
    return out[0], out[1]
