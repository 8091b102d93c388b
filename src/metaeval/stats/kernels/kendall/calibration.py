"""Tie calibration inside every resample: the maximum of integer calibration curves.

For complete data every group has the same number of pairs, and a resample that draws group ``g``
``c_g`` times has the calibration curve ``(B + sum_{p <= t} c_{g(p)} dv_p) / (P * sum c)`` over the pairs
``p`` sorted by their candidate threshold (the largest gap ``|x_a - x_b|`` of the pair's gap class, fixed
by the original data: a resample only re-weights groups), with ``B = sum_p c_{g(p)} v0_p`` (see
:func:`metaeval.stats.mt.tie_calibration.recalibrated`). The numerator is an exact integer, so its first
maximum is exact. :func:`best_integer_curves` finds it for every resample: a compiled loop over the
sorted pairs when numba is installed (:mod:`metaeval.stats.kernels.kendall.calibration_compiled`,
imported on first use, never on ``import metaeval``),
else numpy over batches of resamples; both give the same integers.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import compiler
__all__ = ["best_integer_curves"]

def _compiled():
    from metaeval.stats.kernels.kendall.calibration_compiled import integer_curve_maxima

    return integer_curve_maxima


def best_integer_curves(rs, v0, dv, last, lead, counts, batch: int = 64):
    """``(value, index)`` per resample: the first maximum of ``B + cumsum(c[rs] * dv)`` at the candidates.

    ``rs`` (pairs,) the group of each sorted pair, ``v0`` / ``dv`` (pairs,) integers, ``last`` (pairs,) the
    last pair of each distinct threshold, ``lead`` whether threshold 0 (no pair tied, value ``B``) comes
    first, ``counts`` (k, G) integer group weights. ``index`` counts the candidates, 0 first.
    """
    k = counts.shape[0]
    value, index = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    if rs.size == 0:
        return value, index
    if compiler.numba_available():
        _compiled()(rs.astype(np.int64), v0.astype(np.int64), dv.astype(np.int64), last, bool(lead),
                    np.ascontiguousarray(counts, dtype=np.int64), value, index)
        return value, index
    for lo in range(0, k, batch):
        c = counts[lo:lo + batch][:, rs]
        base = (c * v0).sum(axis=1, keepdims=True)
        curve = base + np.cumsum(c * dv, axis=1)[:, last]
        if lead:
            curve = np.concatenate([base, curve], axis=1)
        idx = np.argmax(curve, axis=1)
        value[lo:lo + batch] = curve[np.arange(curve.shape[0]), idx]
        index[lo:lo + batch] = idx
    return value, index
