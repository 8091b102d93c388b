"""The pair-count coefficients of a metric without ties in a group, as affine functions of one integer sum.

When no two metric values of a group tie, every pair-count coefficient of the group (Kendall tau-a / b / c,
accuracy, acc-eq, tau-eq) is ``scale S + offset`` in ``S = sum_{a<c} t_ac sgn(X_a - X_c)``, with the human's
integer pair weights ``t_ac = sgn(z_a - z_c)``, and so is Spearman with ``t_ac = U_a - U_c`` (``U`` twice the
human's centred average ranks). The permutation kernels of :mod:`metaeval.stats.kernels.kendall.summary_pairs` and
:mod:`metaeval.stats.kernels.kendall.group_pairs` build on these: the human side of every group
(:func:`human_weights`), the coefficient's ``(scale, offset)`` (:func:`group_affine`) and each group's weight
in the level's statistic (:func:`group_weights`).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import TieGroups
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["COEFFICIENTS", "group_affine", "group_weights", "human_weights"]


# name -> (scale, offset) of the coefficient of a group as an affine function of S, from its pair counts:
# P pairs, Tz pairs tied in the human, n cells, k distinct human values, sum of squares of U (Spearman's
# doubled centred human ranks); the metric has no ties in the group.
def group_affine(coefficient: str, pairs: float, tz: np.ndarray, n: int, distinct_z: np.ndarray,
                 uu: np.ndarray | None = None):
    """``(scale, offset)`` per group: the coefficient of a tie-free metric is ``scale S + offset``; the
    scale is NaN where the coefficient is undefined (the human constant, or every pair tied in it)."""
    untied = pairs - tz
    with np.errstate(invalid="ignore", divide="ignore"):
        if coefficient == "spearman":  # r = (S / 4) / (sqrt((n^3 - n) / 12) sqrt(sum U^2 / 4))
            sxx = (float(n) ** 3 - n) / 12.0
            scale = 0.25 / (np.sqrt(sxx) * np.sqrt(uu / 4.0))
            return np.where(distinct_z > 1, scale, np.nan), np.zeros(tz.shape)
        if coefficient == "kendall-b":
            scale = 1.0 / np.sqrt(pairs * untied)
            return np.where(untied > 0, scale, np.nan), np.zeros_like(scale)
        if coefficient == "kendall-a":
            return np.where(untied > 0, 1.0 / pairs, np.nan), np.zeros(tz.shape)
        if coefficient == "kendall-c":
            mm = np.minimum(float(n), distinct_z)
            return np.where(untied > 0, 2.0 / (n * n * (mm - 1.0) / mm), np.nan), np.zeros(tz.shape)
        if coefficient == "accuracy":  # C / (C + D), C = (untied + S) / 2
            return np.where(untied > 0, 0.5 / untied, np.nan), np.where(untied > 0, 0.5, np.nan)
        if coefficient == "acc-eq":  # (C + Txy) / P with Txy = 0
            return np.full(tz.shape, 0.5 / pairs), untied / (2.0 * pairs)
        # tau-eq: (C - D - Tz) / P
        return np.full(tz.shape, 1.0 / pairs), -tz / pairs


COEFFICIENTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq", "spearman")
"""Coefficients that are affine in ``S`` (with its weights ``t``) when the metric has no ties."""


def human_weights(zg: np.ndarray, coefficient: str, rtol: float = TIE_RTOL):
    """The human side of every group (rows of ``zg`` (G, n), complete): integer pair weights and counts.

    Returns ``(key, tz, distinct, uu)``. For Spearman ``key`` is ``U = 2 h - (n + 1)`` (int64), ``h`` the
    average ranks of metaeval's tie rule, and ``t_cd = U_c - U_d``; otherwise ``key`` holds the dense tie
    ranks and ``t_cd = sgn(key_c - key_d)``. ``tz`` are the tied human pairs, ``distinct`` the distinct
    human values and ``uu = sum U^2`` (Spearman; else None). ``rtol``: the relative tie tolerance.
    """
    g, n = zg.shape
    groups = TieGroups(np.ascontiguousarray(zg), np.full(g, n), rtol)
    tz = groups.tied_pairs.astype(np.float64)
    distinct = groups.distinct.astype(np.float64)
    if coefficient == "spearman":
        key = np.rint(2.0 * groups.average_ranks() - (n + 1)).astype(np.int64)
        return key, tz, distinct, (key * key).sum(axis=1).astype(np.float64)
    return groups.dense_ranks().astype(np.int64), tz, distinct, None



def group_weights(scale: np.ndarray, undefined: str, grouped: bool):
    """Weight of each group's ``S`` in the level's statistic, and whether every resample is NaN.

    Grouped levels average the defined groups (``w = scale / #defined``, or ``/ #groups`` under
    ``undefined='zero'``); the global level is one group (``w = scale``), NaN when undefined.
    """
    defined = np.isfinite(scale)
    if not grouped:
        return np.where(defined, scale, 0.0), not bool(defined.all())
    n_agg = int(defined.sum()) if undefined == "skip" else scale.size
    return np.where(defined, scale, 0.0) / max(n_agg, 1), not defined.any() and undefined == "skip"
