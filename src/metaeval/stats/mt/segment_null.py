"""Null draws of the segment-level tasks of the WMT protocols (no grouping, item-grouped and system-grouped
statistics), linear in the number of metrics.

The test is mt-metrics-eval's ``PermutationSigDiff`` as :mod:`metaeval.stats.mt.wmt_permutation` describes it:
every metric is standardized over its N M cells, a draw is a mask ``m`` of the cells (True: the hybrid ``h_i``
keeps metric i's score), ``h_i = m x_i + (1 - m) x_j``, ``h_j = m x_j + (1 - m) x_i`` and the null draw of the
pair is ``stat(h_i) - stat(h_j)``. :func:`hybrid_null` (the reference) scores both hybrids of every pair and
draw from scratch. Here:

* Pearson, Spearman and the pair-count coefficients (Kendall tau-a / b / c, pairwise accuracy, acc-eq,
  tau-eq) at every level take the kernels of the paired permutation tests of ``correlate``
  (:func:`metaeval.stats.significance.pair_permutations.permutation_pairs`: per-metric masked sums shared by
  every pair, compiled dominance counts, the metrics' tied groups counted per draw), with the same masks
  (PERM-BOTH there swaps where ``m`` is False);
* Pairwise Difference Pearson grouped by segment or by system (DiIanni & Deutsch 2025) from per-metric masked
  group moments (:func:`pdp_null`);
* anything else (the WMT DARR tau) takes the reference path.

The masks are drawn from the task's stream exactly as the reference draws them, so for one seed the null
draws equal the reference's to rounding (the tests compare them).

References: Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation
Metrics using Resampling Methods. TACL 9. DiIanni, A. and Deutsch, D. (2025). Pairwise Difference Pearson.
EMNLP 2025.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.mt.wmt_permutation import hybrid_null, zscore

__all__ = ["SHARED_COEFFICIENTS", "drawn_masks", "pdp_null", "segment_null"]

SHARED_COEFFICIENTS = ("pearson", "spearman", "kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq",
                       "tau-eq")
"""Coefficients whose null draws come from the paired permutation kernels of ``correlate``."""

REFERENCE_BATCH = 8
"""Draws per call of ``masks_of`` in :func:`hybrid_null` (the masks of a task are drawn this many at a time)."""


def drawn_masks(masks_of, k, cells, batch=REFERENCE_BATCH):
    """The ``k`` masks ``(k, cells)`` bool that :func:`hybrid_null` reads, drawn in its batches."""
    out = np.empty((k, cells), dtype=bool)
    for lo in range(0, k, batch):
        out[lo:lo + batch] = masks_of(min(batch, k - lo))
    return out


def segment_null(xs, z, masks_of, k, level, coefficient, statistic, engine="auto", rtol=TIE_RTOL):
    """Null draws ``stat(h_i) - stat(h_j)`` of every metric pair i < j (``np.triu_indices(P, 1)`` order),
    shape (pairs, k), of a segment-level task (module docstring).

    Parameters
    ----------
    xs : ndarray (P, N, M)
        Metric scores (systems x segments); ``z`` (N, M) the human's.
    masks_of : callable
        ``masks_of(b)`` -> bool (b, N * M), the next ``b`` masks of the task's stream.
    level : {'global', 'summary', 'by-system'}
    coefficient : str
    statistic : callable
        ``statistic(h (B, N, M), z) -> (B,)``, the task's statistic (the reference path).
    engine : {'auto', 'reference'}
        ``'reference'``: :func:`hybrid_null`.
    rtol : float
        The relative tie tolerance of the rank statistics (the one ``statistic`` uses).
    """
    p, n, m = xs.shape
    complete = bool(np.isfinite(xs).all() and np.isfinite(z).all())
    fast = (coefficient in SHARED_COEFFICIENTS or (coefficient == "pdp" and level in ("summary", "by-system")))
    if engine == "reference" or not complete or not fast or p < 2:
        return hybrid_null(xs, z, masks_of, k, statistic, batch=REFERENCE_BATCH)
    masks = drawn_masks(masks_of, k, n * m).reshape(k, n, m)
    x = zscore(xs.reshape(p, -1), axis=-1).reshape(p, n, m)
    if coefficient == "pdp":
        return pdp_null(x, z, masks, level)
    from metaeval.stats.resampling.draws import PermutationDraws
    from metaeval.stats.significance.pair_permutations import permutation_pairs

    draws = PermutationDraws("both", n, m, bits=~masks)  # there a True bit swaps: h_i keeps x_i where m
    kw = dict(level=level, coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    deltas = permutation_pairs(x, np.asarray(z, dtype=np.float64), draws, None, "auto", kw, rtol=rtol)
    ia, ib = np.triu_indices(p, 1)
    return np.stack([deltas[i, j] for i, j in zip(ia, ib)])


def pdp_null(x, z, masks, level, batch=64):
    """Null draws of grouped PDP (complete data) from per-metric masked group moments.

    With groups of ``n`` positions (a segment's systems at level ``'summary'``, a system's segments at
    ``'by-system'``), PDP of a hybrid is ``sum_g (n s3_g - s1_g Z_g) / sqrt(sum_g (n s2_g - s1_g^2) sum_g (n
    ZZ_g - Z_g^2))`` with ``s1, s2, s3`` the group sums of ``h``, ``h^2``, ``h z`` and ``Z``, ``ZZ`` those of
    ``z`` (:mod:`metaeval.stats.correlations.pdp`). For ``h_i`` each is metric j's sum plus metric i's masked sum
    minus metric j's (``A1_p = sum m x_p``, ``A2_p = sum m x_p^2``, ``A3_p = sum m x_p z``), so the sums over
    groups are per-metric totals except ``sum_g s1_g^2``, whose cross terms are matrix products of the
    per-group sums (P x P per draw). ``x`` (P, N, M) standardized, ``masks`` bool (k, N, M)."""
    if level == "summary":
        xg, zg, mg = np.swapaxes(x, 1, 2), np.asarray(z, dtype=np.float64).T, np.swapaxes(masks, 1, 2)
    else:
        xg, zg, mg = x, np.asarray(z, dtype=np.float64), masks
    p, g, n = xg.shape
    k = mg.shape[0]
    zs, zss = zg.sum(axis=1), (zg * zg).sum(axis=1)
    den_z = (n * zss - zs * zs).sum()
    s1 = xg.sum(axis=2)  # (P, G)
    t1 = s1.sum(axis=1)
    t2 = (xg * xg).sum(axis=(1, 2))
    t3 = (xg * zg[None]).sum(axis=(1, 2))
    t1z = s1 @ zs  # (P,): sum_g S1_p,g Z_g
    q11 = (s1 * s1).sum(axis=1)  # (P,): sum_g S1_p,g^2
    ia, ib = np.triu_indices(p, 1)
    out = np.empty((ia.size, k))
    feats = np.ascontiguousarray(np.concatenate([xg, xg * xg, xg * zg[None]]).transpose(1, 2, 0))  # (G, n, 3P)
    for lo in range(0, k, batch):
        mb = np.ascontiguousarray(mg[lo:lo + batch].transpose(1, 0, 2), dtype=np.float64)  # (G, b, n)
        b = mb.shape[1]
        a = np.matmul(mb, feats).reshape(g, b, 3, p).transpose(2, 1, 3, 0)  # masked group sums (3, b, P, G)
        a1, a2, a3 = (np.ascontiguousarray(a[f]) for f in range(3))
        u1, u2, u3 = a1.sum(axis=2), a2.sum(axis=2), a3.sum(axis=2)  # (b, P)
        u1z = a1 @ zs  # (b, P)
        cross_s = np.einsum("bpg,qg->bpq", a1, s1)  # sum_g A1_p S1_q
        cross_a = a1 @ np.swapaxes(a1, 1, 2)  # (b, P, P) sum_g A1_p A1_q
        diag = np.diagonal(cross_a, axis1=1, axis2=2)  # sum_g A1_p^2

        def pdp(keep, take):
            """PDP of the hybrid of metric ``take`` where masked, ``keep`` elsewhere (pairs in ``keep``, ``take``)."""
            sum1 = t1[keep] + u1[:, take] - u1[:, keep]
            sum2 = t2[keep] + u2[:, take] - u2[:, keep]
            sum3 = t3[keep] + u3[:, take] - u3[:, keep]
            sum1z = t1z[keep] + u1z[:, take] - u1z[:, keep]
            # sum_g (S1_keep + A1_take - A1_keep)^2
            sq = (q11[keep] + diag[:, take] + diag[:, keep] + 2 * cross_s[:, take, keep]
                  - 2 * cross_s[:, keep, keep] - 2 * cross_a[:, take, keep])
            num = n * sum3 - sum1z
            dx = n * sum2 - sq
            scale = n * sum2 + sq  # the operands of dx: below this share of it, dx is a rounding of 0
            with np.errstate(invalid="ignore", divide="ignore"):
                r = num / np.sqrt(dx * den_z)
                return np.where((dx > 64 * np.finfo(float).eps * scale) & (den_z > 0), np.clip(r, -1.0, 1.0),
                                np.nan)

        out[:, lo:lo + b] = (pdp(ib, ia) - pdp(ia, ib)).T
    return out
