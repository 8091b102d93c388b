"""Pairwise Difference Pearson (PDP; DiIanni & Deutsch, EMNLP 2025; mt-metrics-eval ``Pearson(pdp=True)``).

Within each group (a segment's translations at item level, a system's segments at by-system level; the whole
vector at system and global level), every ordered pair of positions gives the differences ``x_a - x_b`` and
``z_a - z_b``; PDP is the Pearson correlation of all these differences pooled over the groups. The differences
of all ordered pairs have mean 0 (each appears with both signs) and ``sum_{a<b} (x_a - x_b)(z_a - z_b) =
n sum_a (x_a - xbar)(z_a - zbar)`` for a group of ``n`` values, so

    PDP = sum_g n_g Sxz_g / sqrt(sum_g n_g Sxx_g  sum_g n_g Szz_g),

``Sxz_g`` the centred cross sum of group ``g`` over the positions where both are present. For one vector
(system or global level) this is Pearson's r; grouped, it pools the groups' pairs instead of averaging
per-group correlations, so a group with constant scores adds no pair instead of an undefined correlation.
Pure numpy, linear in the data.
"""
from __future__ import annotations

import numpy as np

__all__ = ["group_sums", "pooled"]


def _scaled(a):
    """``a`` times a power of two (exact) bringing its largest magnitude near 1, so that the products of the
    sums neither underflow nor overflow at extreme magnitudes (1e-150, 1e150); r does not depend on it."""
    finite = np.abs(a[np.isfinite(a)])
    top = float(finite.max()) if finite.size else 0.0
    return a if top == 0.0 else np.ldexp(a, -int(np.frexp(top)[1]))


def _spread(a: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per group (last axis), whether the valid values are not all exactly equal."""
    return np.where(valid, a, np.inf).min(axis=-1) < np.where(valid, a, -np.inf).max(axis=-1)


def group_sums(xg: np.ndarray, zg: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per group (rows of the last axis; NaN missing), ``(n Sxz, n Sxx, n Szz, n)`` over the positions where
    both are present. A group whose values of one side are all equal contributes exactly 0 to that side's
    sums (and to ``n Sxz``): constancy is tested exactly before the group is centred."""
    valid = np.isfinite(xg) & np.isfinite(zg)
    n = valid.sum(axis=-1)
    xg, zg = _scaled(np.where(valid, xg, np.nan)), _scaled(np.where(valid, zg, np.nan))
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = np.where(valid, xg, 0.0).sum(axis=-1) / n
        zm = np.where(valid, zg, 0.0).sum(axis=-1) / n
    # a group whose values are all equal has no pair with a difference: its deviations are exactly 0, not
    # the rounding of value - mean (0.1 three times has mean 0.10000000000000002), so a metric constant
    # within every group has no spread and its PDP is undefined, never +-1e-16
    dx = np.where(valid & _spread(xg, valid)[..., None], xg - xm[..., None], 0.0)
    dz = np.where(valid & _spread(zg, valid)[..., None], zg - zm[..., None], 0.0)
    return n * (dx * dz).sum(axis=-1), n * (dx * dx).sum(axis=-1), n * (dz * dz).sum(axis=-1), n


def pooled(xg: np.ndarray, zg: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """PDP over the groups (axis -2) of ``xg``, ``zg`` (..., G, n); ``weights`` (k, G) counts of each group
    (bootstrap resamples of the groups) give (k,) statistics. NaN when either side has no spread."""
    sxz, sxx, szz, _ = group_sums(xg, zg)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        sxz, sxx, szz = sxz @ w.T, sxx @ w.T, szz @ w.T
    else:
        sxz, sxx, szz = sxz.sum(axis=-1), sxx.sum(axis=-1), szz.sum(axis=-1)
    den = np.sqrt(sxx * szz)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.clip(sxz / den, -1.0, 1.0), np.nan)
