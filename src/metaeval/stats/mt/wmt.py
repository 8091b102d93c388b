"""The statistics of the WMT metrics task, on systems x segments matrices, with segment resampling.

Every task statistic here is computed for ``P`` metrics at once (``xs`` of shape ``(P, N, M)``) and, under
segment resampling (BOOT-INPUTS: count weights ``c`` of shape ``(k, M)``, one draw per language pair shared
by every task and metric of that language pair), for every resample, from per-metric quantities computed
once: system means are ``(c @ X^T) / sum(c)``; item-grouped correlations are computed once per segment and
averaged with weights ``c``; no-grouping Pearson uses per-segment moments; DARR counts are per segment.
Copies of one drawn segment are separate groups (item-grouped) or extra points (Pearson): they never form
a pair.

Statistics (``x`` a metric, ``z`` the human, over the ``N`` systems of one language pair):

* **pairwise accuracy** (Kocmi et al. 2021): over the system pairs the human does not tie, the share whose
  system-score difference has the same sign under the metric (a metric tie is an error); pooled over
  language pairs by summing agreements and pairs, not by averaging accuracies;
* **soft pairwise accuracy** (Thompson et al. 2024, WMT24): ``SPA = (1 / C(N, 2)) sum_{i<j}
  (1 - |p^h_ij - p^x_ij|)``, ``p_ij`` the one-sided paired-permutation p-value of "system i is better
  than system j" from the segment scores (each segment's two scores swapped with probability 1/2;
  ``p = (1 + #{delta_s >= delta}) / (1 + R)``), the same swaps for the human and every metric
  (:mod:`metaeval.stats.mt.spa`);
* **WMT DARR Kendall-like tau** (Ma et al. 2018, 2019): over pairs of translations of one segment whose
  human scores differ by at least ``threshold`` (25 DA points), ``(Concordant - Discordant) /
  (Concordant + Discordant)`` summed over all segments (a metric tie is Discordant);
* the levels of :mod:`metaeval.stats.correlations.levels` for Pearson and the pairwise coefficients (acc-eq with a
  per-metric calibrated tie threshold is acc23).
"""
from __future__ import annotations

import numpy as np

from metaeval.errors import ParameterError
from metaeval.stats.correlations.coefficients import correlation_rows, pearson_r, rescaled
from metaeval.stats.corpus import CorpusScores, system_pair_deltas
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.correlations.ties import TIE_RTOL, are_tied
from metaeval.stats.mt.spa import system_pvalues

__all__ = ["corpus_system_pvalues", "darr_counts", "pairwise_agreement", "resampled_task", "soft_pairwise_accuracy",
           "system_pvalues"]


def _means(x, weights):
    """System means ``(P, N)`` (weights None) or ``(P, k, N)`` under segment count weights ``(k, M)``."""
    if weights is None:
        return x.mean(axis=-1)
    return np.einsum("km,pnm->pkn", weights.astype(np.float64), x) / weights.sum(axis=1)[None, :, None]


def pairwise_agreement(xbar, zbar, human_ties="skip", rtol=TIE_RTOL):
    """``(agree, pairs)``: system pairs ordered alike by ``xbar`` and ``zbar`` (..., N) - Kocmi et al. (2021).

    ``human_ties='skip'``: among the pairs the human does not tie (a metric tie is a disagreement).
    ``human_ties='count'`` (mt-metrics-eval's ``Agreement``): every pair counts, and agrees when
    ``sign(x_a - x_b) = sign(z_a - z_b)``, so a pair the human ties agrees only if the metric ties it too.
    Ties are the tie rule of :mod:`metaeval.stats.correlations.ties` with the relative tolerance ``rtol``."""
    ia, ib = np.triu_indices(xbar.shape[-1], 1)
    dz = np.sign(zbar[..., ia] - zbar[..., ib]) * ~are_tied(zbar[..., ia], zbar[..., ib], rtol=rtol)
    dx = np.sign(xbar[..., ia] - xbar[..., ib]) * ~are_tied(xbar[..., ia], xbar[..., ib], rtol=rtol)
    counted = np.ones_like(dz, dtype=bool) if human_ties == "count" else dz != 0
    return ((dx == dz) & counted).sum(axis=-1), np.broadcast_to(counted.sum(axis=-1), dx.shape[:-1])


def corpus_system_pvalues(x: CorpusScores, signs, pvalue="randomized"):
    """:func:`system_pvalues` of a corpus metric: ``delta`` is the difference of the two systems' corpus
    scores, and a permutation swaps the two systems' statistics on the segments with ``signs = -1`` before
    re-scoring both corpora (:func:`metaeval.stats.corpus.system_pair_deltas`, approximate randomization)."""
    n = x.shape[0]
    ia, ib = np.triu_indices(n, 1)
    swap = (np.asarray(signs) < 0).astype(np.float64)  # (R, M)
    delta, null, _ = system_pair_deltas(x.statistics, x.present, x.aggregate, list(zip(ia, ib)), "randomization",
                                        swap)
    return _pair_matrix(null, delta, n, pvalue)


def _pair_matrix(null, delta, n, pvalue="randomized"):
    """``p[i, j]`` (upper triangle: i better, lower: j better) from the permuted ``null`` (..., pairs, R) and
    the observed ``delta`` (..., pairs), with the tolerance ``100 eps |delta|``."""
    ia, ib = np.triu_indices(n, 1)
    tol = 100 * np.finfo(float).eps * np.abs(delta)[..., None]
    r = null.shape[-1]
    add = 1 if pvalue == "randomized" else 0
    upper = (add + (null >= delta[..., None] - tol).sum(axis=-1)) / (add + r)
    lower = (add + (null <= delta[..., None] + tol).sum(axis=-1)) / (add + r)  # j better: -delta_r >= -delta
    out = np.full(delta.shape[:-1] + (n, n), np.nan)
    out[..., ia, ib] = upper
    out[..., ib, ia] = lower
    return out


def soft_pairwise_accuracy(xs, z, signs, corpus=None, pvalue="randomized"):
    """SPA of each metric ``xs`` (P, N, M) against the human ``z`` (N, M), Thompson et al. (2024).

    Complete matrices only (a system pair is compared on the segments both have); ``signs`` (R, M).
    ``corpus``: ``{metric index: CorpusScores}`` whose p-values compare corpus scores
    (:func:`corpus_system_pvalues`), with the same swaps. ``pvalue``: the p-value convention of
    :func:`system_pvalues`."""
    n = z.shape[0]
    ia, ib = np.triu_indices(n, 1)
    pz = system_pvalues(z, signs, pvalue)[ia, ib]
    px = system_pvalues(xs, signs, pvalue)[:, ia, ib]
    for index, scores in (corpus or {}).items():
        px[index] = corpus_system_pvalues(scores, signs, pvalue)[ia, ib]
    return 1.0 - np.abs(px - pz[None]).mean(axis=-1)


def darr_counts(xs, z, threshold):
    """Per metric and segment, ``(concordant, discordant)`` over system pairs with ``|z_a - z_b| >=
    threshold`` (WMT DARR; Ma et al. 2018, 2019): shapes (P, M). A metric tie is discordant; missing
    cells make no pair."""
    n = z.shape[0]
    ia, ib = np.triu_indices(n, 1)
    dz = z[ia] - z[ib]  # (pairs, M)
    use = np.abs(dz) >= threshold
    dx = xs[:, ia] - xs[:, ib]  # (P, pairs, M)
    with np.errstate(invalid="ignore"):
        conc = ((dx > 0) & (dz > 0)) | ((dx < 0) & (dz < 0))
        valid = use & np.isfinite(dz) & np.isfinite(dx)
    c = (conc & valid).sum(axis=1)
    return c, valid.sum(axis=1) - c


def resampled_task(xs, z, *, level, coefficient, weights=None, tie_thresholds=None, undefined="skip",
                   darr_threshold=25.0, system_scores=None, rtol=TIE_RTOL):
    """A task statistic of every metric: ``(P,)`` observed, or ``(P, k)`` under segment weights ``(k, M)``.

    Parameters
    ----------
    xs : ndarray (P, N, M)
        Metric scores; ``z`` (N, M) the human's. Complete rows are expected at system level.
    level : {'system', 'summary', 'global', 'by-system'}
    coefficient : str
        A coefficient of :mod:`metaeval.stats.correlations.coefficients`, or ``'darr'`` (segment pairs, WMT DARR).
        At system level, ``'accuracy'`` is Kocmi et al.'s pairwise accuracy.
    weights : ndarray of int (k, M), optional
        Segment count weights of the bootstrap resamples (None: the observed statistic).
    tie_thresholds : ndarray (P,), optional
        Per-metric tie threshold of acc-eq / tau-eq (tie calibration once per metric).
    system_scores : callable, optional
        System level: ``(p, weights) -> (N,)`` or ``(k, N)`` system scores of metric ``p`` replacing the
        mean of its segment scores (corpus BLEU / chrF / TER from summed sufficient statistics).
    rtol : float, optional
        The relative tie tolerance of the rank statistics (:mod:`metaeval.stats.correlations.ties`).
    """
    p, n, m = xs.shape
    thresholds = np.zeros(p) if tie_thresholds is None else np.asarray(tie_thresholds, dtype=float)
    if coefficient == "darr":
        if level != "summary":
            raise ParameterError(f"`level` must be 'summary' for the DARR Kendall-like tau; got {level!r}.")
        c, d = darr_counts(xs, z, darr_threshold)
        if weights is None:
            num, den = (c - d).sum(axis=1), (c + d).sum(axis=1)
        else:
            w = weights.astype(np.float64)
            num, den = (c - d) @ w.T, (c + d) @ w.T
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, np.nan)
    if level == "system":
        if system_scores is not None:
            xbar = np.stack([system_scores(i, weights) for i in range(p)])
        else:
            xbar = _means(xs, weights)
        zbar = _means(z[None], weights)[0]
        if coefficient == "accuracy":
            agree, pairs = pairwise_agreement(xbar, zbar, rtol=rtol)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(pairs > 0, agree / pairs, np.nan)
        return np.stack([correlation_rows(xbar[i].reshape(-1, n), np.broadcast_to(zbar, xbar[i].shape)
                                          .reshape(-1, n), coefficient, thresholds[i], rtol=rtol)
                         .reshape(xbar.shape[1:-1])
                         for i in range(p)])
    if level == "by-system" and weights is not None:
        return _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined, rtol)
    if coefficient == "pdp" and level in ("summary", "by-system") and (weights is None or level == "summary"):
        from metaeval.stats.correlations.pdp import pooled

        groups = (lambda a: np.swapaxes(a, -1, -2)) if level == "summary" else (lambda a: a)
        return np.stack([pooled(groups(xs[i]), groups(z), weights) for i in range(p)])
    if level in ("summary", "by-system"):
        axis_groups = (lambda a: np.swapaxes(a, -1, -2)) if level == "summary" else (lambda a: a)
        zg = axis_groups(z)
        r = np.stack([correlation_rows(axis_groups(xs[i]), zg, coefficient, thresholds[i], rtol=rtol) for i in range(p)])
        defined = np.isfinite(r)
        if undefined == "zero":
            enough = (np.isfinite(axis_groups(xs)) & np.isfinite(zg)[None]).sum(axis=-1) >= 2
            r, defined = np.where(defined, r, 0.0), defined | enough
        rv = np.where(defined, r, 0.0)
        if weights is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                return rv.sum(axis=1) / defined.sum(axis=1)
        w = weights.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (rv @ w.T) / (defined.astype(np.float64) @ w.T)
    if level == "global" and coefficient == "pearson":
        return _global_pearson(xs, z, weights)
    if weights is None:
        return np.array([float(level_correlation(xs[i], z, level=level, coefficient=coefficient,
                                                 undefined=undefined, tie_threshold=thresholds[i],
                                                 rtol=rtol).statistic)
                         for i in range(p)])
    return _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined, rtol)


def _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined, rtol, batch=16):
    """Any level and coefficient under segment weights: the compiled global pair counts when they apply,
    otherwise the reference path on the resampled matrices (segment indices rebuilt from the weights,
    copies of one segment never a pair)."""
    p = xs.shape[0]
    k, m = weights.shape
    out = np.empty((p, k))
    if level == "global" and not thresholds.any():
        from metaeval.stats.kernels import compiler
        from metaeval.stats.kernels.kendall.global_bootstrap import COEFFICIENTS, GlobalPairsBootstrap

        if coefficient in COEFFICIENTS and compiler.numba_available():
            rows = np.ones((k, xs.shape[1]), dtype=np.int64)
            for i in range(p):
                out[i] = GlobalPairsBootstrap(xs[i], z, coefficient, rtol=rtol).from_weights(rows, weights)
            return out
    cols = np.repeat(np.broadcast_to(np.arange(m), (k, m)).ravel(), weights.ravel()).reshape(k, -1)  # equal sums
    for lo in range(0, k, batch):
        c = cols[lo:lo + batch]
        zs = z[:, c].transpose(1, 0, 2)
        for i in range(p):
            out[i, lo:lo + batch] = level_correlation(
                xs[i][:, c].transpose(1, 0, 2), zs, level=level, coefficient=coefficient, undefined=undefined,
                tie_threshold=thresholds[i], col_units=c, rtol=rtol).statistic
    return out


def _global_pearson(xs, z, weights):
    """No-grouping Pearson from per-segment moments (complete matrices): linear in the metrics.

    Each metric and the human scores are first centred on their mean and scaled by a power of two (r is
    invariant to both), so the raw moments neither cancel catastrophically (a metric + 1e10) nor overflow
    (a metric * 1e160)."""
    xs = xs - xs.mean(axis=(1, 2), keepdims=True)
    xs = np.stack([rescaled(v) for v in xs]) if xs.size else xs
    z = rescaled(z - z.mean())
    w = np.ones((1, xs.shape[2])) if weights is None else weights.astype(np.float64)
    n_rows = xs.shape[1]
    cnt = w.sum(axis=1) * n_rows  # (k,)
    sz, szz = w @ z.sum(axis=0), w @ (z * z).sum(axis=0)
    sx = np.einsum("km,pm->pk", w, xs.sum(axis=1))
    sxx = np.einsum("km,pm->pk", w, (xs * xs).sum(axis=1))
    sxz = np.einsum("km,pm->pk", w, (xs * z[None]).sum(axis=1))
    vxz = sxz - sx * sz / cnt
    vxx = sxx - sx * sx / cnt
    vzz = szz - sz * sz / cnt
    r = pearson_r(vxz, vxx, np.sqrt(vzz))
    return r[:, 0] if weights is None else r
