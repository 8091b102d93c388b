"""The significance machinery of the WMT protocols (:func:`metaeval.mt.evaluate.mt_evaluate`): the null
draws or bootstrap resamples of every task, their p-values, and a scope's weighted average with its p-values
and clusters (docs/mt.md, "Significance and the ranking"). Pure numpy."""
from __future__ import annotations

import warnings

import numpy as np

from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.stats.significance.clusters import significance_clusters
from metaeval.stats.correlations.coefficients import correlation_rows
from metaeval.stats.significance.paired_bootstrap import bootstrap_pvalue
from metaeval.stats.mt.tie_calibration import calibrate_ties, pair_table, recalibrated
from metaeval.stats.mt.wmt import pairwise_agreement, resampled_task
from metaeval.stats.mt.wmt_permutation import pair_pvalues, pair_values, pair_values_null, random_bits, system_accuracy_null
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["agreement_rate", "bootstrap_system", "calibrated_task", "mask_source", "pairs_null", "pooled_accuracy",
           "pvalue_matrix", "rank", "system_statistic", "task_range"]


def mask_source(gen, n):
    """``take(b)`` -> the next ``b`` random masks of ``n`` units (one stream per task)."""
    return lambda b: random_bits(gen, b, n)


def agreement_rate(xbar, zbar, human_ties, rtol=TIE_RTOL):
    agree, pairs = pairwise_agreement(xbar, zbar, human_ties, rtol)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, agree / pairs, np.nan)


def system_statistic(stat, human_ties, rtol=TIE_RTOL):
    """``statistic(h (B, N), zbar) -> (B,)`` of a system-level task (``rtol``: the relative tie tolerance)."""
    if stat == "accuracy":
        return lambda h, zbar: agreement_rate(h, zbar, human_ties, rtol)
    return lambda h, zbar: correlation_rows(h, np.broadcast_to(zbar, h.shape), stat, rtol=rtol)


def bootstrap_system(scorer, p, z, w, stat, human_ties, zscorer=None, rtol=TIE_RTOL):
    """Resampled system-level statistics (P, k) under segment count weights ``w`` (k, M); ``zscorer(w)`` the
    human's resampled system scores (default: means of ``z``)."""
    xres = np.stack([scorer(i, w) for i in range(p)])  # (P, k, N)
    zres = (w @ z.T) / w.sum(axis=1)[:, None] if zscorer is None else zscorer(w)
    if stat == "accuracy":
        return agreement_rate(xres, zres[None], human_ties, rtol)
    return np.stack([correlation_rows(xres[i], zres, stat, rtol=rtol) for i in range(p)])


def pooled_accuracy(pooled, p, human_ties, permute, gen, k, draws=True, rtol=TIE_RTOL):
    """Pairwise accuracy pooled over language pairs (agreements summed over pairs summed), observed and its
    permutation null (system scores of all language pairs standardized together, as mt-metrics-eval's
    ``CompareMetricsWithGlobalAccuracy``) or bootstrap resamples."""
    counts = [pairwise_agreement(xbar, zbar, human_ties, rtol) for xbar, zbar, *_ in pooled]
    total = sum(c[1] for c in counts)
    if not np.any(np.asarray(total) > 0):
        warnings.warn("pooled system-level accuracy is undefined (NaN): the human scores tie every pair of systems"
                      f" in every language pair (human_ties={human_ties!r} leaves no pair to count).",
                      DegenerateWarning, stacklevel=3)
        return np.full(p, np.nan), None
    obs = sum(c[0] for c in counts) / total
    sizes = [zbar.size for _, zbar, *_ in pooled]
    if not draws:
        return obs, None
    if not permute:
        agree = pairs = 0
        for xbar, zbar, scorer, z, w, zscorer in pooled:
            xres = np.stack([scorer(i, w) for i in range(p)])
            zres = zscorer(w)
            a, n = pairwise_agreement(xres, zres[None], human_ties, rtol)
            agree, pairs = agree + a, pairs + n
        with np.errstate(invalid="ignore", divide="ignore"):  # a resample that ties every pair: NaN
            return obs, np.where(pairs > 0, agree / np.maximum(pairs, 1), np.nan)
    xcat = np.concatenate([xbar for xbar, *_ in pooled], axis=1)
    zcat = np.concatenate([zbar for _, zbar, *_ in pooled])
    return obs, system_accuracy_null(xcat, zcat, random_bits(gen, k, xcat.shape[1]), human_ties, sizes, rtol=rtol)


def pairs_null(xs, z, level, coefficient, eps, gen, k, rtol=TIE_RTOL):
    """The pairwise permutation test of acc23 / tau23 (each metric with its calibrated threshold)."""
    vals, wts = zip(*(pair_values(xs[i], z, level, coefficient, eps[i], rtol) for i in range(xs.shape[0])))
    return pair_values_null(np.stack(vals), wts[0], gen, k)


def pvalue_matrix(statistics, draws, permute, pconv):
    """(P, P) p-values of one task: from its permutation null, or the paired bootstrap's."""
    p = statistics.size
    if draws is None:
        return np.full((p, p), np.nan)
    if permute:
        return pair_pvalues(draws, statistics, pconv)
    pv = np.full((p, p), np.nan)
    for i in range(p):
        for j in range(p):
            if i != j:
                ds = draws[i] - draws[j]
                pv[i, j] = bootstrap_pvalue(ds[np.isfinite(ds)], statistics[i] - statistics[j], "greater")
    return pv


def calibrated_task(xs, z, level, coefficient, w, recalibrate, rtol=TIE_RTOL):
    """acc23 / tau23 of every metric: observed (P,), resampled (P, k) (None without bootstrap weights ``w``),
    thresholds (P,); ``rtol``: the relative tie tolerance."""
    p = xs.shape[0]
    eps = np.zeros(p)
    obs = np.zeros(p)
    res = None if w is None else np.zeros((p, w.shape[0]))
    for i in range(p):
        cal = calibrate_ties(xs[i], z, level=level, coefficient=coefficient, rtol=rtol)
        eps[i], obs[i] = cal.threshold, cal.statistic
        if w is None:
            continue
        if recalibrate and level == "summary":
            res[i] = recalibrated(pair_table(xs[i].T, z.T, rtol=rtol), coefficient, w)[0]
        elif recalibrate and level == "system":
            xbar = (w @ xs[i].T) / w.sum(axis=1)[:, None]
            zbar = (w @ z.T) / w.sum(axis=1)[:, None]
            res[i] = [calibrate_ties(xbar[b][:, None], zbar[b][:, None], level="global",
                                     coefficient=coefficient, rtol=rtol).statistic for b in range(w.shape[0])]
        elif recalibrate:
            raise ParameterError(f"`recalibrate` must be False at level {level!r} (it re-optimises at the "
                                 "'summary' and 'system' levels); got True.")
        else:
            res[i] = resampled_task(xs[i:i + 1], z, level=level, coefficient=coefficient, weights=w,
                                    tie_thresholds=eps[i:i + 1], rtol=rtol)[0]
    return obs, res, eps


def rank(statistics, draws, use, weights, ranges, permute, pconv, alpha, p, test=True):
    """A scope's weighted average of rescaled task statistics, its p-values and cluster ranks. Permutation:
    the average's null draw is the weighted sum of the tasks' null draws (mt-metrics-eval
    ``AverageCorrMatrix``); bootstrap: the paired-bootstrap p-value of the resampled averages. ``test=False``
    (no draws): NaN p-values and the ranks of the averages (1 = best, equal averages share a rank)."""
    if not use:
        return np.full(p, np.nan), np.ones(p, dtype=int), np.full((p, p), np.nan)
    avg = sum(w * (statistics[t] - lo) / (hi - lo) for t, w, (lo, hi) in zip(use, weights, ranges))
    if not test:
        order = -np.nan_to_num(avg, nan=-np.inf)
        return avg, 1 + (order[:, None] > order[None, :]).sum(axis=1), np.full((p, p), np.nan)
    if permute:
        null = sum(w * draws[t] / (hi - lo) for t, w, (lo, hi) in zip(use, weights, ranges))
        pv = pair_pvalues(null, avg, pconv)
    else:
        avg_s = sum(w * (draws[t] - lo) / (hi - lo) for t, w, (lo, hi) in zip(use, weights, ranges))
        pv = pvalue_matrix(avg, avg_s, False, pconv)
    return avg, significance_clusters(avg, pv, alpha=alpha), pv


def task_range(statistic, preset=None):
    """``(low, high)`` of a statistic for the WMT rescaling ``(s - low) / (high - low)``: the accuracies
    (pairwise accuracy, acc-eq, acc23 and soft pairwise accuracy) are in [0, 1] and taken as they are, every
    correlation is in [-1, 1] (mt-metrics-eval ``TaskResults.range``, where ``pce`` is SPA)."""
    if statistic in ("accuracy", "acc-eq", "acc23", "soft-accuracy"):
        return 0.0, 1.0
    return -1.0, 1.0
