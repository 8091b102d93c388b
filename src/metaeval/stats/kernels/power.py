"""Fused Pearson kernels for the power simulation: both metrics, both levels, one trial at a time.

The power simulation runs 2 resampling tests x 2 levels x 11 proportions x 1000 trials on fresh draws,
so it evaluates the statistics of X and Y together from one set of products per trial:

* PERM-BOTH (swap bits ``B``, ``(M, k, N)``): system means are linear in the bits,
  ``xbar'_a = xbar_a + (1/M) sum_b B_ab (Y_ab - X_ab)``; per input, the sums of ``X'``, ``X'^2`` and
  ``X' z`` are linear in the bits: one batched matrix product ``B @ L`` with ``L`` of shape ``(M, N, 3)``
  (the formulas of :class:`metaeval.stats.kernels._PermSummaryPearson`).
* BOOT-BOTH (system multiplicities ``w``, input multiplicities ``c``): resampled system means are
  ``c @ X^T / M`` and a Pearson correlation over a resample with duplicated systems is the
  ``w``-weighted one; per input, the ``w``-weighted moments of X, Y and Z come from one product
  ``w @ [X, Y, Z, X^2, Y^2, Z^2, XZ, YZ]``.

They compute the numbers of the generic path (:func:`metaeval.stats.significance.permutation.permutation_deltas`,
:func:`metaeval.stats.resampling.bootstrap.bootstrap_samples`) to rounding (``tests/test_analyses_power.py``), except
for one documented difference: a resampled vector counts as constant (its correlation undefined) when its
variance is at most ``(1e-7 max|v|)^2`` per point, where the generic path compares values pairwise with a
1e-9 relative tolerance.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import pearson_r
from metaeval.stats.kernels.rows import _aggregate, _weighted_aggregate

__all__ = ["perm_pearson", "boot_pearson"]

RTOL = 1e-7


def _pearson_rows(u: np.ndarray, v: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Pearson correlation of every row of ``u`` with ``v`` (rows, or one vector), optionally weighted."""
    n = u.shape[-1]
    w = np.ones(n) if weights is None else weights
    total = w.sum(axis=-1, keepdims=True)
    uc = u - (w * u).sum(axis=-1, keepdims=True) / total
    vc = v - (w * v).sum(axis=-1, keepdims=True) / total
    suu = (w * uc * uc).sum(axis=-1)
    svv = (w * vc * vc).sum(axis=-1)
    suv = (w * uc * vc).sum(axis=-1)
    bad = (suu <= total[..., 0] * (RTOL * np.abs(u).max(axis=-1)) ** 2)
    bad |= (svv <= total[..., 0] * (RTOL * np.abs(v).max(axis=-1)) ** 2)
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
    z_const = znorm <= np.sqrt(n) * RTOL * np.abs(z).max(axis=0)
    zt = np.where(z_const, 0.0, zc / np.where(z_const, 1.0, znorm))
    centre = (xs.mean(axis=0) + ys.mean(axis=0)) / 2.0
    xc, yc = xs - centre, ys - centre
    d = yc - xc
    lin = np.ascontiguousarray(np.stack([d, yc * yc - xc * xc, d * zt], axis=2).transpose(1, 0, 2))  # (M, N, 3)
    s = np.matmul(bf, lin)  # (M, k, 3)
    scale = n * (RTOL * np.maximum(np.abs(xc).max(axis=0), np.abs(yc).max(axis=0))) ** 2  # (M,)
    out = []
    for sign, base in ((1.0, (xc.sum(0), (xc * xc).sum(0), (xc * zt).sum(0))),
                       (-1.0, (yc.sum(0), (yc * yc).sum(0), (yc * zt).sum(0)))):
        s1 = base[0][:, None] + sign * s[..., 0]
        s2 = base[1][:, None] + sign * s[..., 1]
        sz = base[2][:, None] + sign * s[..., 2]
        v = s2 - s1 * s1 / n
        bad = (v <= scale[:, None]) | z_const[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(sz / np.sqrt(np.where(bad, 1.0, v)), -1.0, 1.0)
        out.append(_aggregate(np.where(bad, np.nan, r).T, "skip"))
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
    bad_z = vz <= (RTOL * np.abs(z).max(axis=0)) ** 2
    out = []
    for mv, sv, sc, values in ((mx, s[:, 3], s[:, 6], x), (my, s[:, 4], s[:, 7], y)):
        v = sv - mv * mv
        bad = bad_z | (v <= (RTOL * np.abs(values).max(axis=0)) ** 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip((sc - mv * mz) / np.sqrt(np.where(bad, 1.0, v * vz)), -1.0, 1.0)
        out.append(_weighted_aggregate(np.where(bad, np.nan, r), c, "skip"))
    return out[0], out[1]
