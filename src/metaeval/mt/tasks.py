"""The tasks of :func:`metaeval.mt.evaluate.mt_evaluate`: each task runs itself on one language pair.

:func:`language_pair` prepares a language pair (systems and segments kept, system scores: the metrics' own
system scores where given, corpus scores, or the mean of the segments). :func:`make_task` gives the
:class:`Task` of a ``level/statistic`` (a registry by kind: :class:`SystemTask`, :class:`SegmentTask`,
:class:`CalibratedTask` for acc23 / tau23, :class:`SoftAccuracyTask`); ``task.run(language_pair, draws)``
computes its observed statistic for every metric and, when ``draws`` asks, its null draws (permutation) or
resampled statistics (bootstrap). :class:`PooledAccuracyTask` is the system-level pairwise accuracy pooled
over several language pairs: ``run(language_pairs, draws)``. The numerics are in :mod:`metaeval.stats.mt`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from ..stats.correlations.coefficients import correlation_rows, rescaled
from ..stats.mt.significance import (
    agreement_rate,
    bootstrap_system,
    calibrated_task,
    mask_source,
    pairs_null,
    pooled_accuracy,
    system_statistic,
)
from ..stats.mt.segment_null import segment_null
from ..stats.mt.spa import spa_null
from ..stats.mt.wmt import resampled_task, soft_pairwise_accuracy
from ..stats.mt.wmt_permutation import pearson_null, random_bits, system_accuracy_null, system_null

__all__ = ["CALIBRATED", "CalibratedTask", "Draws", "LanguagePair", "PooledAccuracyTask", "SegmentTask",
           "SoftAccuracyTask", "SystemTask", "Task", "TaskOutcome", "TaskSettings", "by_subset", "language_pair",
           "make_task", "segments_kept", "subsample_statistics"]

CALIBRATED = {"acc23": "acc-eq", "tau23": "tau-eq"}


@dataclass
class LanguagePair:
    """One language pair ready for the tasks: metric scores ``xs`` (P, N, M), the human's ``z`` (N, M), the
    system scores ``scorer(i, weights)`` of metric ``i`` and ``zscorer(weights)`` of the human (fixed when
    they come from system-score files), the corpus statistics, the bootstrap weights ``w`` (None under
    the permutation test) and the metrics' names."""

    xs: np.ndarray
    z: np.ndarray
    scorer: Callable
    zscorer: Callable
    corpus: dict
    w: Any = None
    names: tuple = ()

    @property
    def xbar(self):
        return np.stack([self.scorer(i, None) for i in range(self.xs.shape[0])])

    @property
    def zbar(self):
        return self.zscorer(None)


@dataclass(frozen=True)
class Draws:
    """How the tasks draw: permutation nulls (``permute``) or bootstrap resamples (the weights ``w`` of the
    language pair), ``k`` of them from ``gen``; ``keep=False`` computes the observed statistics only (no test,
    e.g. each metric on its own segments). :meth:`keyed` gives the draws of one stream of the seed ``root``
    (:func:`metaeval.mt.streams.stream`)."""

    permute: bool
    k: int
    gen: Any
    keep: bool = True
    root: Any = None

    def keyed(self, *key) -> "Draws":
        """These draws from the stream ``key`` of ``root`` (every metric pair of a task shares it)."""
        from .streams import stream

        return replace(self, gen=stream(self.root, *key))


@dataclass(frozen=True)
class TaskSettings:
    """The options every task reads: acc23 / tau23 re-calibrated in each resample, SPA's permutations and
    p-value convention, the human-tie rule of system accuracy, DARR's threshold, the relative tie tolerance."""

    recalibrate: bool
    spa_permutations: int
    pvalue: str
    human_ties: str
    darr_threshold: float
    rtol: float


@dataclass(frozen=True)
class TaskOutcome:
    """One task on one language pair (or pooled): ``observed`` (P,), ``draws`` (null draws or resampled
    statistics, None when not drawn) and acc23 / tau23's calibrated ``thresholds`` (P,) (else None)."""

    observed: np.ndarray
    draws: Any = None
    thresholds: Any = None


@dataclass(frozen=True)
class Task(ABC):
    """A task ``level/statistic`` with its settings; :meth:`run` computes it on one language pair."""

    level: str
    statistic: str
    settings: TaskSettings

    @property
    def name(self) -> str:
        return f"{self.level}/{self.statistic}"

    @abstractmethod
    def run(self, lp: LanguagePair, draws: Draws) -> TaskOutcome:
        """The task's outcome on the language pair ``lp`` with the ``draws`` it is given."""


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

    return LanguagePair(xs, z, score, zscore, corpus, names=tuple(metrics))


class CalibratedTask(Task):
    """acc23 / tau23: acc-eq / tau-eq with each metric's tie threshold calibrated on the data (Deutsch, Foster &
    Freitag 2023); under the permutation test the pairs' comparison results are exchanged."""

    def run(self, lp, draws):
        st, coefficient = self.settings, CALIBRATED[self.statistic]
        o, r, eps = calibrated_task(lp.xs, lp.z, self.level, coefficient, lp.w, st.recalibrate, st.rtol)
        if draws.permute and draws.keep:
            r = pairs_null(lp.xs, lp.z, self.level, coefficient, eps, draws.gen, draws.k, st.rtol)
        return TaskOutcome(o, r, eps)


class SoftAccuracyTask(Task):
    """Soft pairwise accuracy; its null between metrics under the permutation test (none under the
    bootstrap: its resampling would nest a permutation test in each resample)."""

    def run(self, lp, draws):
        st = self.settings
        n, m = lp.z.shape
        signs = np.where(draws.gen.random((st.spa_permutations, m)) < 0.5, -1.0, 1.0)
        spa_corpus = {i: lp.corpus[name] for i, name in enumerate(lp.names) if name in lp.corpus}
        o = soft_pairwise_accuracy(lp.xs, lp.z, signs, spa_corpus, st.pvalue)
        r = None
        if draws.permute and draws.keep:
            r = spa_null(lp.xs, lp.z, signs, mask_source(draws.gen, n * m), draws.k, st.pvalue)
        return TaskOutcome(o, r)


class SystemTask(Task):
    """A statistic of the system scores (the mean of the segments, or given system scores)."""

    def run(self, lp, draws):
        st, stat = self.settings, self.statistic
        p = lp.xs.shape[0]
        xbar, zbar = lp.xbar, lp.zbar
        if stat == "accuracy":
            o = agreement_rate(xbar, zbar, st.human_ties, st.rtol)
        else:
            o = np.array([correlation_rows(xbar[i][None], zbar[None], stat, rtol=st.rtol)[0] for i in range(p)])
        if not draws.keep:
            return TaskOutcome(o)
        gen, k = draws.gen, draws.k
        if not draws.permute:
            return TaskOutcome(o, bootstrap_system(lp.scorer, p, lp.z, lp.w, stat, st.human_ties, lp.zscorer, st.rtol))
        if stat == "accuracy":
            r = system_accuracy_null(xbar, zbar, random_bits(gen, k, xbar.shape[1]), st.human_ties, rtol=st.rtol)
        elif stat == "pearson":
            r = pearson_null(xbar, zbar, mask_source(gen, xbar.shape[1]), k)
        else:
            r = system_null(xbar, zbar, random_bits(gen, k, xbar.shape[1]), system_statistic(stat, st.human_ties,
                                                                                               st.rtol))
        return TaskOutcome(o, r)


class SegmentTask(Task):
    """A statistic of the segment scores: item-grouped (summary), no grouping (global) or system-grouped."""

    def run(self, lp, draws):
        st = self.settings
        xs, z = lp.xs, lp.z
        p = xs.shape[0]
        kw = dict(level=self.level, coefficient=self.statistic, darr_threshold=st.darr_threshold, rtol=st.rtol)
        o = resampled_task(xs, z, **kw)
        if not draws.keep:
            return TaskOutcome(o)
        if not draws.permute:
            return TaskOutcome(o, resampled_task(xs, z, weights=lp.w, **kw))
        if self.level == "global" and self.statistic == "pearson":
            return TaskOutcome(o, pearson_null(xs.reshape(p, -1), z.ravel(), mask_source(draws.gen, z.size), draws.k))

        def generic(h, zz):
            return resampled_task(h, zz, **kw)

        return TaskOutcome(o, segment_null(xs, z, mask_source(draws.gen, z.size), draws.k, self.level,
                                           self.statistic, generic, rtol=st.rtol))


class PooledAccuracyTask(Task):
    """System-level pairwise accuracy pooled over language pairs (Kocmi et al. 2021): agreements summed over
    the system pairs of every language pair; its permutation null standardizes the system scores of all
    language pairs together (mt-metrics-eval ``CompareMetricsWithGlobalAccuracy``)."""

    def __init__(self, settings: TaskSettings):
        super().__init__("system", "accuracy", settings)

    def run(self, lps: Sequence[LanguagePair], draws: Draws) -> TaskOutcome:
        st = self.settings
        p = lps[0].xs.shape[0]
        pooled = [(lp.xbar, lp.zbar, lp.scorer, lp.z, lp.w, lp.zscorer) for lp in lps]
        o, r = pooled_accuracy(pooled, p, st.human_ties, draws.permute, draws.gen, draws.k, draws=draws.keep,
                               rtol=st.rtol)
        return TaskOutcome(o, r)


def make_task(level: str, statistic: str, settings: TaskSettings) -> Task:
    """The :class:`Task` of ``level/statistic`` (checked by the protocol)."""
    if statistic in CALIBRATED:
        return CalibratedTask(level, statistic, settings)
    if statistic == "soft-accuracy":
        return SoftAccuracyTask(level, statistic, settings)
    if level == "system":
        return SystemTask(level, statistic, settings)
    return SegmentTask(level, statistic, settings)


def by_subset(level, stat):
    """Whether :func:`subsample_statistics` leaves a task to be computed subset by subset: soft pairwise accuracy
    (its p-values draw their own sign flips per subset) and acc23 / tau23 at the no-grouping and
    system-grouped levels (no re-calibration under weights there)."""
    return stat == "soft-accuracy" or (stat in CALIBRATED and level not in ("summary", "system"))


def subsample_statistics(lp, level, stat, subsets, *, human_ties, darr_threshold, rtol):
    """A task's statistics of every metric on each of ``b`` subsets of the segments of ``lp`` (bool (b, M)), as
    ``(b, P)``, computed once for all subsets (the statistics under 0/1 segment weights, as the bootstrap's:
    per-segment statistics computed once and averaged, system means and moments weighted; acc23 / tau23
    re-calibrated in each subset; ``rtol`` the relative tie tolerance). None for the tasks of
    :func:`by_subset`."""
    if by_subset(level, stat):
        return None
    weighted = replace(lp, w=np.asarray(subsets, dtype=np.int64))
    settings = TaskSettings(recalibrate=stat in CALIBRATED, spa_permutations=0, pvalue="randomized",
                            human_ties=human_ties, darr_threshold=darr_threshold, rtol=rtol)
    res = make_task(level, stat, settings).run(weighted, Draws(permute=False, k=weighted.w.shape[0], gen=None)).draws
    return np.asarray(res, dtype=float).T
