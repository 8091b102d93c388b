"""The tasks of :func:`metaeval.mt.evaluate.mt_evaluate`, by kind, on one language pair.

:func:`language_pair` prepares a language pair (systems and segments kept, system scores: the metrics' own
system scores where given, corpus scores, or the mean of the segments); each ``*_task`` function computes one
kind of task for every metric: its observed statistics and, when asked, its null draws (permutation) or
resampled statistics (bootstrap). The numerics are in :mod:`metaeval.stats.mt`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..stats.correlations.coefficients import correlation_rows, rescaled
from ..stats.mt.significance import (
    agreement_rate,
    bootstrap_system,
    calibrated_task,
    mask_source,
    pairs_null,
    system_statistic,
)
from ..stats.mt.segment_null import segment_null
from ..stats.mt.spa import spa_null
from ..stats.mt.wmt import resampled_task, soft_pairwise_accuracy
from ..stats.mt.wmt_permutation import pearson_null, random_bits, system_accuracy_null, system_null

__all__ = ["CALIBRATED", "LanguagePair", "by_subset", "calibrated", "language_pair", "run_task", "segment_task",
           "spa_task", "subsample_statistics", "system_task"]

CALIBRATED = {"acc23": "acc-eq", "tau23": "tau-eq"}


@dataclass
class LanguagePair:
    """One language pair ready for the tasks: metric scores ``xs`` (P, N, M), the human's ``z`` (N, M), the
    system scores ``scorer(i, weights)`` of metric ``i`` and ``zscorer(weights)`` of the human (fixed when
    they come from system-score files), the corpus statistics, and the bootstrap weights ``w`` (None under
    the permutation test)."""

    xs: np.ndarray
    z: np.ndarray
    scorer: Callable
    zscorer: Callable
    corpus: dict
    w: Any = None

    @property
    def xbar(self):
        return np.stack([self.scorer(i, None) for i in range(self.xs.shape[0])])

    @property
    def zbar(self):
        return self.zscorer(None)


def segments_kept(ds, metrics, human, corpus, rows):
    """(M,) bool: the segments where every kept system has every metric's and the human's score."""
    ok = np.isfinite(ds.matrix(human)[rows]).all(axis=0)
    for m in metrics:
        ok &= np.isfinite(ds.matrix(m)[rows]).all(axis=0)
    for scores in corpus.values():
        ok &= scores.present[rows].all(axis=0)
    return ok


def language_pair(ds, metrics, human, corpus, fixed, cols):
    """:class:`LanguagePair` of the systems of ``ds`` on the segments ``cols`` (bool (M,)); ``fixed``:
    ``{scorer: (N,) system scores}`` used at system level instead of the mean of the segments."""
    # rescaled at extreme magnitudes (exact; docs/statistics.md, "Extreme magnitudes")
    xs = np.stack([rescaled(ds.matrix(m)[:, cols]) for m in metrics])
    z = rescaled(ds.matrix(human)[:, cols])
    corpus = {m: c.take(np.ones(len(ds.systems), dtype=bool), cols) for m, c in corpus.items()}

    def score(i, weights):
        name = metrics[i]
        if name in corpus:
            return corpus[name].system_scores(weights)
        if name in fixed:
            return fixed[name] if weights is None else np.broadcast_to(fixed[name], (weights.shape[0],
                                                                                      fixed[name].size))
        if weights is None:
            return xs[i].mean(axis=1)
        return (weights @ xs[i].T) / weights.sum(axis=1)[:, None]

    def zscore(weights):
        if human in fixed:
            return fixed[human] if weights is None else np.broadcast_to(fixed[human], (weights.shape[0],
                                                                                        fixed[human].size))
        return z.mean(axis=1) if weights is None else (weights @ z.T) / weights.sum(axis=1)[:, None]

    return LanguagePair(xs, z, score, zscore, corpus)


def calibrated(lp, level, stat, permute, draws, gen, k, recalibrate, rtol):
    """acc23 / tau23: ``(observed (P,), draws or None, thresholds (P,))``."""
    o, r, eps = calibrated_task(lp.xs, lp.z, level, CALIBRATED[stat], lp.w, recalibrate, rtol)
    if permute and draws:
        r = pairs_null(lp.xs, lp.z, level, CALIBRATED[stat], eps, gen, k, rtol)
    return o, r, eps


def spa_task(lp, permute, draws, gen, k, spa_permutations, pvalue, metrics):
    """Soft pairwise accuracy; its null between metrics under the permutation test (none under the
    bootstrap: its resampling would nest a permutation test in each resample)."""
    n, m = lp.z.shape
    signs = np.where(gen.random((spa_permutations, m)) < 0.5, -1.0, 1.0)
    spa_corpus = {i: lp.corpus[name] for i, name in enumerate(metrics) if name in lp.corpus}
    o = soft_pairwise_accuracy(lp.xs, lp.z, signs, spa_corpus, pvalue)
    r = None
    if permute and draws:
        r = spa_null(lp.xs, lp.z, signs, mask_source(gen, n * m), k, pvalue)
    return o, r


def system_task(lp, stat, permute, draws, gen, k, human_ties, rtol):
    xs, z = lp.xs, lp.z
    p = xs.shape[0]
    xbar, zbar = lp.xbar, lp.zbar
    if stat == "accuracy":
        o = agreement_rate(xbar, zbar, human_ties, rtol)
    else:
        o = np.array([correlation_rows(xbar[i][None], zbar[None], stat, rtol=rtol)[0] for i in range(p)])
    if not draws:
        return o, None
    if permute and stat == "accuracy":
        return o, system_accuracy_null(xbar, zbar, random_bits(gen, k, xbar.shape[1]), human_ties, rtol=rtol)
    if permute and stat == "pearson":
        return o, pearson_null(xbar, zbar, mask_source(gen, xbar.shape[1]), k)
    if permute:
        return o, system_null(xbar, zbar, random_bits(gen, k, xbar.shape[1]), system_statistic(stat, human_ties, rtol))
    return o, bootstrap_system(lp.scorer, p, z, lp.w, stat, human_ties, lp.zscorer, rtol)


def segment_task(lp, level, stat, permute, draws, gen, k, darr_threshold, rtol):
    xs, z = lp.xs, lp.z
    p = xs.shape[0]
    kw = dict(level=level, coefficient=stat, darr_threshold=darr_threshold, rtol=rtol)
    o = resampled_task(xs, z, **kw)
    if not draws:
        return o, None
    if not permute:
        return o, resampled_task(xs, z, weights=lp.w, **kw)
    if level == "global" and stat == "pearson":
        return o, pearson_null(xs.reshape(p, -1), z.ravel(), mask_source(gen, z.size), k)

    def generic(h, zz):
        return resampled_task(h, zz, **kw)

    return o, segment_null(xs, z, mask_source(gen, z.size), k, level, stat, generic, rtol=rtol)


def run_task(lp, level, stat, *, permute, draws, gen, k, recalibrate, spa_permutations, pvalue, human_ties,
             darr_threshold, metrics, rtol):
    """``(observed (P,), draws or None, thresholds or None)`` of one task on one language pair (``rtol``: the
    relative tie tolerance of the rank statistics)."""
    if stat in CALIBRATED:
        return calibrated(lp, level, stat, permute, draws, gen, k, recalibrate, rtol)
    if stat == "soft-accuracy":
        return (*spa_task(lp, permute, draws, gen, k, spa_permutations, pvalue, metrics), None)
    if level == "system":
        return (*system_task(lp, stat, permute, draws, gen, k, human_ties, rtol), None)
    return (*segment_task(lp, level, stat, permute, draws, gen, k, darr_threshold, rtol), None)


def by_subset(level, stat):
    """Whether :func:`subsample_statistics` leaves a task to be computed subset by subset: soft pairwise accuracy
    (its p-values draw their own sign flips per subset) and acc23 / tau23 at the no-grouping and
    system-grouped levels (no re-calibration under weights there)."""
    return stat == "soft-accuracy" or (stat in CALIBRATED and level not in ("summary", "system"))


def subsample_statistics(lp, level, stat, subsets, *, human_ties, darr_threshold, metrics, rtol):
    """A task's statistics of every metric on each of ``b`` subsets of the segments of ``lp`` (bool (b, M)), as
    ``(b, P)``, computed once for all subsets (the statistics under 0/1 segment weights, as the bootstrap's:
    per-segment statistics computed once and averaged, system means and moments weighted; acc23 / tau23
    re-calibrated in each subset; ``rtol`` the relative tie tolerance). None for the tasks of
    :func:`by_subset`."""
    if by_subset(level, stat):
        return None
    weighted = LanguagePair(lp.xs, lp.z, lp.scorer, lp.zscorer, lp.corpus, np.asarray(subsets, dtype=np.int64))
    res = run_task(weighted, level, stat, permute=False, draws=True, gen=None, k=weighted.w.shape[0],
                   recalibrate=stat in CALIBRATED, spa_permutations=0, pvalue="randomized", human_ties=human_ties,
                   darr_threshold=darr_threshold, metrics=metrics, rtol=rtol)[1]
    return np.asarray(res, dtype=float).T
