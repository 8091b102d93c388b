"""Machine-translation meta-evaluation the WMT way: several language pairs, several tasks, one ranking.

:func:`mt_evaluate` takes one ScoreSet per language pair (a mapping ``{lp: ScoreSet}``, e.g. what an
mt-metrics-eval reader returns, or one ScoreSet), computes every task ``level/statistic`` for every metric
in every language pair, and ranks the metrics per language pair and pooled over all of them by the mean of
their task statistics, with significance clusters from a paired bootstrap over segments (WMT23; Freitag et
al. 2023). See docs/mt.md for the formulas and decisions.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError
from ..serialization import EXCLUDED, ResultMixin
from ..signature import Signature
from ..stats.clusters import rank_ranges, significance_clusters
from ..stats.paired_bootstrap import bootstrap_pvalue
from ..stats.resampling import bootstrap_draws, count_weights
from ..stats.tie_calibration import calibrate_ties, pair_table, recalibrated
from ..stats.wmt import pairwise_agreement, resampled_task, soft_pairwise_accuracy
from ..vocabulary import check_mt_task

__all__ = ["MtEvaluationResult", "mt_evaluate"]

POOLED = "pooled"
_CALIBRATED = {"acc23": "acc-eq", "tau23": "tau-eq"}


@dataclass(frozen=True)
class MtEvaluationResult(ResultMixin):
    """Result of :func:`mt_evaluate`.

    Attributes
    ----------
    metrics : tuple of str
    language_pairs : tuple of str
    tasks : tuple of str
        ``'lp:level/statistic'`` for every task computed, plus ``'pooled:system/accuracy'`` when the
        system-level pairwise accuracy is a task (pooled over language pairs, Kocmi et al. 2021).
    statistics : ndarray (T, P)
        Each task's statistic for each metric.
    tie_thresholds : dict
        Task -> (P,) calibrated tie thresholds of acc23 / tau23 tasks.
    scopes : tuple of str
        The language pairs and ``'pooled'``; each has a ranking.
    averages, ranks : dict
        Scope -> (P,) mean task statistic and cluster rank (1 = best cluster).
    pvalues : dict
        Scope -> (P, P) paired-bootstrap p-values of "row metric's mean beats column metric's".
    ranked_tasks : dict
        Scope -> the tasks averaged (soft pairwise accuracy is reported but never averaged, nor is a task
        whose statistic is undefined for some metric, e.g. DARR without a pair over the threshold).
    n_segments_dropped : dict
        Language pair -> segments left out because some system, metric or the human lacks a score.
    systems_without_human : dict
        Language pair -> systems left out because the human scored none of their segments.
    n_resamples : int
    alpha : float
    signature : Signature
    """

    metrics: tuple[str, ...]
    language_pairs: tuple[str, ...]
    tasks: tuple[str, ...]
    statistics: np.ndarray
    tie_thresholds: dict
    scopes: tuple[str, ...]
    averages: dict
    ranks: dict
    pvalues: dict = field(metadata=EXCLUDED)
    ranked_tasks: dict = field(metadata=EXCLUDED)
    n_segments_dropped: dict = field(default_factory=dict)
    systems_without_human: dict = field(default_factory=dict)
    n_resamples: int = 0
    alpha: float = defaults.ALPHA
    signature: Signature | None = None

    def frame_rows(self) -> list[dict[str, Any]]:
        rows = []
        for scope in self.scopes:
            order = np.argsort(-np.nan_to_num(self.averages[scope], nan=-np.inf), kind="stable")
            ranges = rank_ranges(self.ranks[scope][order])
            for pos, i in enumerate(order):
                span = ranges[pos] if "-" in ranges[pos] else f"{ranges[pos]}-{ranges[pos]}"  # text, never a number
                row = {"scope": scope, "metric": self.metrics[i], "rank": int(self.ranks[scope][i]),
                       "positions": span, "average": float(self.averages[scope][i])}
                for t, task in enumerate(self.tasks):
                    if task.startswith(scope + ":"):
                        row[task.split(":", 1)[1]] = float(self.statistics[t, i])
                rows.append(row)
        return rows

    def table(self, scope: str = POOLED):
        """The ranking of one scope as a DataFrame (metrics best first)."""
        import pandas as pd

        return pd.DataFrame([r for r in self.frame_rows() if r["scope"] == scope])


def _mt_iv(data, metrics, human, tasks, exclude_systems, n_resamples, alpha):
    if isinstance(data, ScoreSet):
        data = {data.name or "data": data}
    if not isinstance(data, Mapping) or not data:
        raise ParameterError(f"`data` must be a ScoreSet or a non-empty mapping of language pair -> ScoreSet; "
                             f"got {type(data).__name__}.")
    for lp, ds in data.items():
        if not isinstance(ds, ScoreSet):
            raise ParameterError(f"`data[{lp!r}]` must be a ScoreSet; got {type(ds).__name__}.")
    first = next(iter(data.values()))
    human = human if human is not None else (first.humans[0] if first.humans else None)
    if human is None:
        raise ParameterError("`human` must name a human scorer; got None and the data has none.")
    excluded = (exclude_systems,) if isinstance(exclude_systems, str) else tuple(exclude_systems)
    known = set().union(*(ds.systems for ds in data.values()))
    unknown = [s for s in excluded if s not in known]
    if unknown:
        raise ParameterError(f"`exclude_systems` must name systems of the data; got unknown {unknown!r}.")
    out = {}
    for lp, ds in data.items():
        keep = [s for s in ds.systems if s not in excluded]
        ds = ds.subset(systems=keep) if len(keep) < len(ds.systems) else ds
        ds.require(human, param="human")
        iv.check_level_design(ds, "system")
        out[str(lp)] = ds
    metrics = iv.check_metrics(first, metrics, human, minimum=2)
    for ds in out.values():
        iv.check_metrics(ds, metrics, human, minimum=2)
    if isinstance(tasks, str):
        tasks = (tasks,)
    parsed = tuple(check_mt_task(t) for t in tasks)
    if not parsed:
        raise ParameterError("`tasks` must name at least one task; got an empty list.")
    return out, metrics, human, parsed, excluded, iv.check_n_resamples(n_resamples), iv.check_alpha(alpha)


def _complete(ds, metrics, human, corpus):
    """``(X (P, N', M'), z (N', M'), rows kept, columns kept, segments dropped, systems dropped)``.

    Systems without any human score (e.g. a reference the humans did not rate) are left out, then the
    segments where some remaining system lacks a metric's or the human's score."""
    xs = np.stack([ds.matrix(m) for m in metrics])
    z = ds.matrix(human)
    rows = np.isfinite(z).any(axis=1)
    xs, z = xs[:, rows], z[rows]
    ok = np.isfinite(xs).all(axis=(0, 1)) & np.isfinite(z).all(axis=0)
    for scores in corpus.values():
        ok &= scores.present[rows].all(axis=0)
    return (xs[:, :, ok], z[:, ok], rows, ok, int((~ok & np.isfinite(z).any(axis=0)).sum()),
            tuple(s for s, keep in zip(ds.systems, rows) if not keep))


@iv.with_tie_tolerance
def mt_evaluate(
    data: ScoreSet | Mapping[str, ScoreSet],
    metrics: Sequence[str] | None = None,
    human: str | None = None,
    *,
    tasks: Sequence[str] = defaults.MT_TASKS,
    exclude_systems: Sequence[str] = (),
    n_resamples: int = defaults.N_RESAMPLES,
    alpha: float = defaults.ALPHA,
    recalibrate: bool = defaults.MT_RECALIBRATE,
    darr_threshold: float = defaults.MT_DARR_THRESHOLD,
    spa_permutations: int = defaults.MT_SPA_PERMUTATIONS,
    corpus_statistics: Mapping[str, Mapping[str, Any]] | None = None,
    rng: Any = None,
    progress: Any = None,
) -> MtEvaluationResult:
    """WMT-style meta-evaluation of MT metrics over one or several language pairs.

    Parameters
    ----------
    data : ScoreSet or mapping of str to ScoreSet
        One ScoreSet (systems x segments) per language pair.
    metrics : list of str, optional
        Metrics present in every language pair (default: every non-human scorer of the first).
    human : str, optional
        The human scorer (default: the first human scorer), e.g. MQM or DA z-scores.
    tasks : list of str
        ``'level/statistic'`` with level ``system``, ``summary`` (= ``segment``, item-grouped),
        ``global`` (no grouping) or ``by-system``, and a statistic of
        :data:`metaeval.vocabulary.MT_STATISTICS`. Default :data:`metaeval.defaults.MT_TASKS`.
    exclude_systems : list of str
        Systems left out in every language pair (e.g. human references ``refA``); references kept in the
        data are ranked as systems.
    n_resamples : int
        Bootstrap resamples of the segments (one draw per language pair, shared by its tasks and metrics).
    alpha : float
        Significance level of the clusters.
    recalibrate : bool
        acc23 / tau23: re-optimise the tie threshold inside every resample (item-grouped and system levels)
        instead of using the threshold calibrated once per metric on the data (default False).
    darr_threshold : float
        Minimum human score difference of a DARR pair (25 DA points).
    spa_permutations : int
        Permutations per system pair of the soft pairwise accuracy.
    corpus_statistics : mapping, optional
        ``{metric: {lp: corpus}}`` with ``corpus`` a :class:`metaeval.stats.corpus.CorpusScores` (e.g. from
        :func:`metaeval.scoring.corpus.corpus_statistics`) or a pair ``(statistics (N, M, S), aggregate)``
        aligned with that language pair's systems and segments, as ``corpus_statistics`` of
        :func:`metaeval.correlate` per language pair: system-level scores of these metrics are corpus scores
        from summed sufficient statistics, in the resamples too.
    rng : None, int or numpy.random.Generator

    progress : callable, optional
        Called with no argument after each task of each language pair (for progress bars).

    Returns
    -------
    MtEvaluationResult

    Notes
    -----
    Every language pair keeps the systems with at least one human score (``systems_without_human``), then
    the segments where every kept system has every metric's and the human's score
    (``n_segments_dropped``). A task's statistic is resampled with the same segment draws for
    every metric; the mean over a scope's tasks is compared between metrics with the paired-bootstrap
    p-value ``#{delta_s - delta >= delta} / k`` and ranked into clusters with mt-metrics-eval's rule
    (:func:`metaeval.stats.clusters.significance_clusters`). The pooled scope averages every language pair's
    tasks, with system-level pairwise accuracy replaced by one task pooled over language pairs (agreeing
    pairs summed over pairs summed, Kocmi et al. 2021).

    References
    ----------
    Kocmi, T. et al. (2021). To Ship or Not to Ship. WMT 2021.
    Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter. EMNLP 2023.
    Freitag, M. et al. (2023). Results of WMT23 Metrics Shared Task. WMT 2023.
    Thompson, B. et al. (2024). Improving Statistical Significance in Human Evaluation of Automatic Metrics
    via Soft Pairwise Accuracy. WMT 2024.
    Ma, Q. et al. (2018, 2019). Results of the WMT18 / WMT19 Metrics Shared Task.
    """
    data, metrics, human, parsed, excluded, k, alpha = _mt_iv(data, metrics, human, tasks, exclude_systems,
                                                              n_resamples, alpha)
    gen, seed = iv.rng_and_seed(rng)
    corpus_statistics = _corpus_iv(data, corpus_statistics)
    p = len(metrics)
    names, obs, res, thresholds = [], [], [], {}
    pooled_counts = []
    dropped, unjudged = {}, {}
    for lp, ds in data.items():
        corpus = {m: per_lp[lp] for m, per_lp in corpus_statistics.items()}
        xs, z, rows, cols, dropped[lp], unjudged[lp] = _complete(ds, metrics, human, corpus)
        if z.shape[0] < iv.MIN_SYSTEMS or z.shape[1] == 0:
            raise ParameterError(f"`data[{lp!r}]` must keep at least {iv.MIN_SYSTEMS} systems with human scores"
                                 f" and one complete segment; got {z.shape[0]} systems, {z.shape[1]} segments.")
        corpus = {m: c.take(rows, cols) for m, c in corpus.items()}
        m_seg = z.shape[1]
        draws = bootstrap_draws(z.shape[0], m_seg, method="inputs", n_resamples=k, rng=gen)
        w = count_weights(draws.col_indices(), m_seg)
        scorer = _system_scorer(metrics, corpus, xs)
        for level, stat in parsed:
            name = f"{lp}:{level}/{stat}"
            if stat in _CALIBRATED:
                o, r, eps = _calibrated_task(xs, z, level, _CALIBRATED[stat], w, recalibrate)
                thresholds[name] = eps
            elif stat == "soft-accuracy":
                signs = np.where(gen.random((spa_permutations, m_seg)) < 0.5, -1.0, 1.0)
                spa_corpus = {i: corpus[m] for i, m in enumerate(metrics) if m in corpus}
                o, r = soft_pairwise_accuracy(xs, z, signs, spa_corpus), None
            else:
                kw = dict(level=level, coefficient=stat, darr_threshold=darr_threshold,
                          system_scores=scorer if level == "system" else None)
                o, r = resampled_task(xs, z, **kw), resampled_task(xs, z, weights=w, **kw)
            if level == "system" and stat == "accuracy":
                xbar = np.stack([scorer(i, None) for i in range(p)])
                xres = np.stack([scorer(i, w) for i in range(p)])
                zbar, zres = z.mean(axis=1), (w @ z.T) / w.sum(axis=1)[:, None]
                pooled_counts.append((pairwise_agreement(xbar, zbar), pairwise_agreement(xres, zres)))
            names.append(name)
            obs.append(o)
            res.append(r)
            if progress is not None:
                progress()
    if pooled_counts:
        names.append(f"{POOLED}:system/accuracy")
        agree = sum(c[0][0] for c in pooled_counts)
        pairs = sum(c[0][1] for c in pooled_counts)
        obs.append(agree / pairs)
        res.append(sum(c[1][0] for c in pooled_counts) / sum(c[1][1] for c in pooled_counts))
    statistics = np.array(obs, dtype=float)
    scopes = tuple(data) + (POOLED,)
    averages, ranks, pvalues, ranked = {}, {}, {}, {}
    for scope in scopes:
        if scope == POOLED:
            use = [t for t, n in enumerate(names) if res[t] is not None and
                   (n.startswith(POOLED + ":") or not (pooled_counts and n.endswith(":system/accuracy")))]
        else:
            use = [t for t, n in enumerate(names) if n.startswith(scope + ":") and res[t] is not None]
        use = [t for t in use if np.isfinite(statistics[t]).all()]  # an undefined task cannot be averaged
        ranked[scope] = tuple(names[t] for t in use)
        averages[scope], ranks[scope], pvalues[scope] = _rank(statistics[use], [res[t] for t in use], alpha)
    signature = Signature.of(
        language_pairs=tuple(data), metrics=len(metrics), human=human, tasks=tuple(f"{a}/{b}" for a, b in parsed),
        exclude_systems=excluded or None, resampling="boot-inputs", resamples=k, alpha=alpha,
        recalibrate=bool(recalibrate), corpus_level=tuple(corpus_statistics) or None, seed=seed)
    return MtEvaluationResult(metrics, tuple(data), tuple(names), statistics, thresholds, scopes, averages, ranks,
                              pvalues, ranked, dropped, unjudged, k, alpha, signature)


def _corpus_iv(data, corpus_statistics):
    """``{metric: {lp: CorpusScores}}`` validated against every language pair's data."""
    if corpus_statistics is None:
        return {}
    if not isinstance(corpus_statistics, Mapping):
        raise ParameterError(f"`corpus_statistics` must be a mapping of metric -> {{language pair: corpus "
                             f"statistics}}; got {type(corpus_statistics).__name__}.")
    out = {m: {} for m in corpus_statistics}
    for lp, ds in data.items():
        given = {}
        for metric, per_lp in corpus_statistics.items():
            if not isinstance(per_lp, Mapping) or lp not in per_lp:
                raise ParameterError(f"`corpus_statistics[{metric!r}]` must map every language pair to its corpus "
                                     f"statistics; got none for {lp!r}.")
            given[metric] = per_lp[lp]
        for metric, scores in iv.check_corpus_statistics(ds, given).items():
            out[metric][lp] = scores
    return out


def _system_scorer(metrics, corpus, xs):
    def score(i, weights):
        name = metrics[i]
        if name in corpus:
            return corpus[name].system_scores(weights)
        if weights is None:
            return xs[i].mean(axis=1)
        return (weights @ xs[i].T) / weights.sum(axis=1)[:, None]

    return score


def _calibrated_task(xs, z, level, coefficient, w, recalibrate):
    """acc23 / tau23 of every metric: observed (P,), resampled (P, k), thresholds (P,)."""
    p = xs.shape[0]
    eps = np.zeros(p)
    obs = np.zeros(p)
    res = np.zeros((p, w.shape[0]))
    for i in range(p):
        cal = calibrate_ties(xs[i], z, level=level, coefficient=coefficient)
        eps[i], obs[i] = cal.threshold, cal.statistic
        if recalibrate and level == "summary":
            res[i] = recalibrated(pair_table(xs[i].T, z.T), coefficient, w)[0]
        elif recalibrate and level == "system":
            xbar = (w @ xs[i].T) / w.sum(axis=1)[:, None]
            zbar = (w @ z.T) / w.sum(axis=1)[:, None]
            res[i] = [calibrate_ties(xbar[b][:, None], zbar[b][:, None], level="global",
                                     coefficient=coefficient).statistic for b in range(w.shape[0])]
        elif recalibrate:
            raise ParameterError(f"`recalibrate` must be False at level {level!r} (it re-optimises at the "
                                 "'summary' and 'system' levels); got True.")
        else:
            res[i] = resampled_task(xs[i:i + 1], z, level=level, coefficient=coefficient, weights=w,
                                    tie_thresholds=eps[i:i + 1])[0]
    return obs, res, eps


def _rank(statistics, resampled, alpha):
    """Mean over tasks, paired-bootstrap p-values of the means and cluster ranks."""
    p = statistics.shape[1] if statistics.ndim == 2 else 0
    if not resampled:
        return np.full(p, np.nan), np.ones(p, dtype=int), np.full((p, p), np.nan)
    avg = statistics.mean(axis=0)
    avg_s = np.mean(np.stack(resampled), axis=0)  # (P, k)
    pv = np.full((p, p), np.nan)
    for i in range(p):
        for j in range(p):
            if i != j:
                ds = avg_s[i] - avg_s[j]
                pv[i, j] = bootstrap_pvalue(ds[np.isfinite(ds)], avg[i] - avg[j], "greater")
    return avg, significance_clusters(avg, pv, alpha=alpha), pv
