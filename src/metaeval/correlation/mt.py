"""Machine-translation meta-evaluation the WMT way: several language pairs, several tasks, one ranking.

:func:`mt_evaluate` takes one ScoreSet per language pair (a mapping ``{lp: ScoreSet}``, e.g. what an
mt-metrics-eval reader returns, or one ScoreSet), computes every task ``level/statistic`` for every metric
in every language pair, and ranks the metrics per language pair and pooled over all of them by a weighted
average of their task statistics, with significance clusters. The default protocol reproduces the WMT23
metrics task as mt-metrics-eval computes it (Freitag et al. 2023): tasks, (r + 1) / 2 rescaling, weights,
PERM-BOTH permutation tests per task and for the average. See docs/mt.md for the formulas and decisions.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError, check_choice
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.correlations.coefficients import rescaled
from ..stats.resampling.draws import bootstrap_draws, count_weights
from ..stats.mt.spa import spa_null
from ..stats.mt.wmt import resampled_task, soft_pairwise_accuracy
from ..stats.mt.wmt_permutation import hybrid_null, pearson_null, random_bits, system_accuracy_null, system_null
from .mt_significance import (
    agreement_rate,
    bootstrap_system,
    calibrated_task,
    mask_source,
    pairs_null,
    pooled_accuracy,
    rank,
    pvalue_matrix,
    system_statistic,
    task_range,
)
from ..vocabulary import MT_HUMAN_TIES, MT_PROTOCOLS, MT_SIGNIFICANCE, check_mt_task

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
        Scope -> (P,) weighted average of the (rescaled) task statistics and its cluster rank (1 = best).
    pvalues : dict
        Scope -> (P, P) p-values of "row metric's average beats column metric's".
    ranked_tasks, weights : dict
        Scope -> the tasks averaged and their weights (summing to 1). A task whose statistic is undefined
        for some metric (e.g. DARR without a pair over the threshold) is left out; so is soft pairwise
        accuracy under the bootstrap (it has no resampled statistic).
    task_pvalues, task_ranks : dict
        Task -> (P, P) p-values of "row metric beats column metric" on that task and (P,) cluster ranks.
    n_segments_dropped : dict
        Language pair -> segments left out because some system, metric or the human lacks a score.
    n_segments : dict
        Language pair -> segments used.
    systems_without_human : dict
        Language pair -> systems left out because the human scored none of their segments.
    protocol, significance, human_ties : str
        The protocol (``vocabulary.MT_PROTOCOLS``) and the test and human-tie rule in effect.
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
    pvalues: dict
    ranked_tasks: dict
    weights: dict
    task_pvalues: dict
    task_ranks: dict
    n_segments_dropped: dict = field(default_factory=dict)
    n_segments: dict = field(default_factory=dict)
    systems_without_human: dict = field(default_factory=dict)
    protocol: str = defaults.MT_PROTOCOL
    significance: str = "permutation"
    human_ties: str = "count"
    n_resamples: int = 0
    alpha: float = defaults.ALPHA
    signature: Signature | None = None

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per scope or task and metric (long format, the CSV): the statistic (a scope's average),
        the cluster rank and the p-values ``p_vs_<metric>`` of "this metric beats that one"."""
        rows = []

        def add(scope, task, values, ranks, pvalues):
            for i, metric in enumerate(self.metrics):
                row = {"scope": scope, "task": task, "metric": metric, "statistic": float(values[i]),
                       "rank": int(ranks[i])}
                for j, other in enumerate(self.metrics):
                    row[f"p_vs_{other}"] = float(pvalues[i, j])
                rows.append(row)

        for scope in self.scopes:
            add(scope, "average", self.averages[scope], self.ranks[scope], self.pvalues[scope])
        for t, task in enumerate(self.tasks):
            scope, name = task.split(":", 1)
            add(scope, name, self.statistics[t], self.task_ranks[task], self.task_pvalues[task])
        return rows

    def table(self, scope: str = POOLED):
        """The ranking of one scope as a DataFrame (metrics best first): rank, positions, average and the
        scope's task statistics."""
        import pandas as pd

        return pd.DataFrame(self._ranking_rows(scope))

    def _ranking_rows(self, scope):
        order = np.argsort(-np.nan_to_num(self.averages[scope], nan=-np.inf), kind="stable")
        ranges = rank_ranges(self.ranks[scope][order])
        rows = []
        for pos, i in enumerate(order):
            span = ranges[pos] if "-" in ranges[pos] else f"{ranges[pos]}-{ranges[pos]}"  # text, never a number
            row = {"scope": scope, "metric": self.metrics[i], "rank": int(self.ranks[scope][i]),
                   "positions": span, "average": float(self.averages[scope][i])}
            for t, task in enumerate(self.tasks):
                if task.startswith(scope + ":"):
                    row[task.split(":", 1)[1]] = float(self.statistics[t, i])
            rows.append(row)
        return rows

    def ranking_frame(self):
        """Every scope's ranking (:meth:`table`) in one DataFrame, the terminal table of ``metaeval mt``."""
        import pandas as pd

        return pd.DataFrame([r for scope in self.scopes for r in self._ranking_rows(scope)])

    def notes(self) -> list[str]:
        """Lines to print under the ranking: the segments each language pair left out."""
        out = []
        for lp in self.language_pairs:
            dropped = self.n_segments_dropped.get(lp, 0)
            if dropped:
                total = dropped + self.n_segments.get(lp, 0)
                out.append(f"{lp}: {dropped} of {total} segments dropped ({100 * dropped / total:.0f}%: some "
                           "system, metric or the human has no score there)")
        return out


def _mt_iv(data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems, n_resamples, alpha):
    if isinstance(data, ScoreSet):
        data = {data.name or "data": data}
    if not isinstance(data, Mapping) or not data:
        raise ParameterError(f"`data` must be a ScoreSet or a non-empty mapping of language pair -> ScoreSet; "
                             f"got {type(data).__name__}.")
    for lp, ds in data.items():
        if not isinstance(ds, ScoreSet):
            raise ParameterError(f"`data[{lp!r}]` must be a ScoreSet; got {type(ds).__name__}.")
    protocol = check_choice("protocol", protocol, MT_PROTOCOLS)
    preset = defaults.MT_PRESETS[protocol]
    significance = check_choice("significance", preset["significance"] if significance is None else significance,
                                MT_SIGNIFICANCE)
    human_ties = check_choice("human_ties", preset["human_ties"] if human_ties is None else human_ties, MT_HUMAN_TIES)
    first = next(iter(data.values()))
    if human is None:
        if len(first.humans) > 1:
            raise ParameterError(f"`human` must be given when the data has several human scorers; choose one of "
                                 f"{', '.join(map(repr, first.humans))}; got None.")
        human = first.humans[0] if first.humans else None
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
    metrics = iv.check_metrics(first, metrics, human, minimum=1)
    for ds in out.values():
        iv.check_metrics(ds, metrics, human, minimum=1)
    tasks = preset["tasks"] if tasks is None else tasks
    if isinstance(tasks, str):
        tasks = (tasks,)
    parsed = tuple(check_mt_task(t) for t in tasks)
    if not parsed:
        raise ParameterError("`tasks` must name at least one task; got an empty list.")
    return (out, metrics, human, protocol, preset, parsed, significance, human_ties, excluded,
            iv.check_n_resamples(n_resamples), iv.check_alpha(alpha))


def _complete(ds, metrics, human, corpus):
    """``(X (P, N', M'), z (N', M'), rows kept, columns kept, segments dropped, systems dropped)``.

    Systems without any human score (e.g. a reference the humans did not rate) are left out, then the
    segments where some remaining system lacks a metric's or the human's score."""
    # rescaled at extreme magnitudes (exact; docs/statistics.md, "Extreme magnitudes")
    xs = np.stack([rescaled(ds.matrix(m)) for m in metrics])
    z = rescaled(ds.matrix(human))
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
    protocol: str = defaults.MT_PROTOCOL,
    tasks: Sequence[str] | None = None,
    significance: str | None = None,
    human_ties: str | None = None,
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
        Metrics present in every language pair (default: every non-human scorer of the first); one is enough.
    human : str, optional
        The human scorer, e.g. MQM or DA z-scores (default: the only human scorer; required when the data
        has several).
    protocol : {'wmt23', 'wmt24', 'mean'}
        Preset of the tasks, the averaging, the test, the human-tie rule and the p-value convention
        (:data:`metaeval.defaults.MT_PRESETS`; default :data:`metaeval.defaults.MT_PROTOCOL`). ``'wmt23'``
        and ``'wmt24'`` reproduce mt-metrics-eval's ``tasks.WMT23`` / ``tasks.WMT24``; ``'mean'`` is the
        plain mean of the task statistics.
    tasks : list of str, optional
        ``'level/statistic'`` with level ``system``, ``summary`` (= ``segment``, item-grouped),
        ``global`` (no grouping) or ``by-system``, and a statistic of
        :data:`metaeval.vocabulary.MT_STATISTICS` (default: the protocol's).
    significance : {'permutation', 'bootstrap'}, optional
        Test between metrics (default: the protocol's, permutation): mt-metrics-eval's permutation tests
        per task (PERM-BOTH over the task's units; pairs swapped for acc23 / tau23) with the average's null
        from the tasks' draws, or a paired bootstrap over segments.
    human_ties : {'count', 'skip'}, optional
        System-level pairwise accuracy and the system pairs the human ties: counted (a metric that separates
        them is wrong; mt-metrics-eval) or left out (default: the protocol's).
    exclude_systems : list of str
        Systems left out in every language pair (e.g. human references ``refA``); references kept in the
        data are ranked as systems.
    n_resamples : int
        Permutation draws per task (or bootstrap resamples of the segments).
    alpha : float
        Significance level of the clusters.
    recalibrate : bool
        Bootstrap only: acc23 / tau23 re-optimise the tie threshold inside every resample (item-grouped and
        system levels) instead of using the threshold calibrated once per metric on the data.
    darr_threshold : float
        Minimum human score difference of a DARR pair (25 DA points).
    spa_permutations : int
        Permutations per system pair of the soft pairwise accuracy.
    corpus_statistics : mapping, optional
        ``{metric: {lp: corpus}}`` with ``corpus`` a :class:`metaeval.stats.corpus.CorpusScores` (e.g. from
        :func:`metaeval.scoring.corpus.corpus_statistics`) or a pair ``(statistics (N, M, S), aggregate)``
        aligned with that language pair's systems and segments: system-level scores of these metrics are
        corpus scores from summed sufficient statistics.
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
    (``n_segments_dropped``). A scope's average is ``sum_t w_t s_t`` with, under the WMT protocols,
    ``s_t = (r_t + 1) / 2`` for a correlation and the pooled system accuracy weighted by the number of language
    pairs (mt-metrics-eval ``TaskSetResults.AverageCorrs`` and ``tasks.WMT23``); under ``'mean'`` the plain
    mean. Permutation test of a task between metrics i and j (mt-metrics-eval ``PermutationSigDiff``): the
    scores of each metric are standardized over the task's units (the N system scores at system level; every
    cell at segment level; system scores of all language pairs together for the pooled accuracy), and each
    draw exchanges the two metrics' scores on every unit independently with probability 1/2; acc23 / tau23
    exchange the comparison results of the pairs instead (``PairwisePermutationSigDiff``). The average's null
    draw is ``sum_t w_t null_t / (high_t - low_t)`` (``AverageCorrMatrix``). Clusters:
    :func:`metaeval.stats.significance.clusters.significance_clusters`.

    References
    ----------
    Kocmi, T. et al. (2021). To Ship or Not to Ship. WMT 2021.
    Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter. EMNLP 2023.
    Freitag, M. et al. (2023). Results of WMT23 Metrics Shared Task. WMT 2023.
    Freitag, M. et al. (2024). Are LLMs Breaking MT Metrics? Results of the WMT24 Metrics Shared Task. WMT 2024.
    Thompson, B. et al. (2024). Improving Statistical Significance in Human Evaluation of Automatic Metrics
    via Soft Pairwise Accuracy. WMT 2024.
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9.
    Ma, Q. et al. (2018, 2019). Results of the WMT18 / WMT19 Metrics Shared Task.
    """
    (data, metrics, human, protocol, preset, parsed, significance, human_ties, excluded, k,
     alpha) = _mt_iv(data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems,
                     n_resamples, alpha)
    if recalibrate and significance == "permutation":
        raise ParameterError("`recalibrate` must be False with significance='permutation' (the pairs test of "
                             "acc23 keeps each metric's calibrated threshold); got True.")
    gen, seed = iv.rng_and_seed(rng)
    corpus_statistics = _corpus_iv(data, corpus_statistics)
    pconv = preset["pvalue"]
    permute = significance == "permutation"
    if permute and corpus_statistics and any(stat == "soft-accuracy" for _, stat in parsed):
        raise ParameterError("`significance` must be 'bootstrap' for soft pairwise accuracy with corpus metrics "
                             "(their segment cells cannot be exchanged); got 'permutation'.")
    p = len(metrics)
    names, obs, draws, thresholds = [], [], [], {}
    pooled = []  # per language pair: metric system scores (P, N), human's (N,), observed and resampled counts
    dropped, used, unjudged = {}, {}, {}
    for lp, ds in data.items():
        corpus = {m: per_lp[lp] for m, per_lp in corpus_statistics.items()}
        xs, z, rows, cols, dropped[lp], unjudged[lp] = _complete(ds, metrics, human, corpus)
        if z.shape[0] < iv.MIN_SYSTEMS or z.shape[1] == 0:
            # names the language pair, not a Python expression: the CLI shows it as it is
            raise ParameterError(f"language pair {lp!r} must keep at least {iv.MIN_SYSTEMS} systems with human scores"
                                 f" and one segment scored by every metric and the human; got {z.shape[0]} systems,"
                                 f" {z.shape[1]} segments.")
        used[lp] = int(z.shape[1])
        corpus = {m: c.take(rows, cols) for m, c in corpus.items()}
        m_seg = z.shape[1]
        w = None
        if not permute:
            w = count_weights(bootstrap_draws(z.shape[0], m_seg, method="inputs", n_resamples=k,
                                              rng=gen).col_indices(), m_seg)
        scorer = _system_scorer(metrics, corpus, xs)
        xbar = np.stack([scorer(i, None) for i in range(p)])
        for level, stat in parsed:
            name = f"{lp}:{level}/{stat}"
            if stat in _CALIBRATED:
                o, r, eps = calibrated_task(xs, z, level, _CALIBRATED[stat], w, recalibrate)
                thresholds[name] = eps
                if permute:
                    r = pairs_null(xs, z, level, _CALIBRATED[stat], eps, gen, k)
            elif stat == "soft-accuracy":
                signs = np.where(gen.random((spa_permutations, m_seg)) < 0.5, -1.0, 1.0)
                spa_corpus = {i: corpus[m] for i, m in enumerate(metrics) if m in corpus}
                o = soft_pairwise_accuracy(xs, z, signs, spa_corpus, pconv)
                r = None
                if permute:
                    r = spa_null(xs, z, signs, mask_source(gen, xs.shape[1] * m_seg), k, pconv)
            elif level == "system":
                if stat == "accuracy":
                    o = agreement_rate(xbar, z.mean(axis=1), human_ties)
                else:
                    o = resampled_task(xs, z, level=level, coefficient=stat, system_scores=scorer)
                if permute and stat == "accuracy":
                    r = system_accuracy_null(xbar, z.mean(axis=1), random_bits(gen, k, xbar.shape[1]), human_ties)
                elif permute and stat == "pearson":
                    r = pearson_null(xbar, z.mean(axis=1), mask_source(gen, xbar.shape[1]), k)
                elif permute:
                    r = system_null(xbar, z.mean(axis=1), random_bits(gen, k, xbar.shape[1]),
                                    system_statistic(stat, human_ties))
                else:
                    r = bootstrap_system(scorer, p, z, w, stat, human_ties)
            else:
                kw = dict(level=level, coefficient=stat, darr_threshold=darr_threshold)
                o = resampled_task(xs, z, **kw)
                if not permute:
                    r = resampled_task(xs, z, weights=w, **kw)
                elif level == "global" and stat == "pearson":
                    r = pearson_null(xs.reshape(p, -1), z.ravel(), mask_source(gen, z.size), k)
                else:
                    def generic(h, zz, kw=kw):
                        return resampled_task(h, zz, **kw)

                    r = hybrid_null(xs, z, mask_source(gen, z.size), k, generic)
            if level == "system" and stat == "accuracy":
                pooled.append((xbar, z.mean(axis=1), scorer, z, w))
            names.append(name)
            obs.append(np.asarray(o, dtype=float))
            draws.append(r)
            if progress is not None:
                progress()
    if pooled:
        names.append(f"{POOLED}:system/accuracy")
        o, r = pooled_accuracy(pooled, p, human_ties, permute, gen, k)
        obs.append(o)
        draws.append(r)
    statistics = np.array(obs, dtype=float)
    task_pvalues, task_ranks = {}, {}
    for t, name in enumerate(names):
        pv = pvalue_matrix(statistics[t], draws[t], permute, pconv)
        task_pvalues[name] = pv
        task_ranks[name] = significance_clusters(statistics[t], pv, alpha=alpha)
    scopes = tuple(data) + (POOLED,)
    averages, ranks, pvalues, ranked, weights = {}, {}, {}, {}, {}
    n_lp = len(data)
    for scope in scopes:
        if scope == POOLED:
            use = [t for t, n in enumerate(names)
                   if n.startswith(POOLED + ":") or not (pooled and n.endswith(":system/accuracy"))]
        else:
            use = [t for t, n in enumerate(names) if n.startswith(scope + ":")]
        use = [t for t in use if draws[t] is not None and np.isfinite(statistics[t]).all()]
        raw = np.array([n_lp if preset["average"] == "wmt" and names[t].startswith(POOLED + ":") else 1.0
                        for t in use])
        wts = raw / raw.sum() if use else raw
        ranked[scope], weights[scope] = tuple(names[t] for t in use), tuple(float(v) for v in wts)
        averages[scope], ranks[scope], pvalues[scope] = rank(
            statistics, draws, use, wts, [task_range(names[t].rsplit("/", 1)[1], preset) if preset["average"] == "wmt"
                                          else (0.0, 1.0) for t in use], permute, pconv, alpha, p)
    signature = Signature.of(
        language_pairs=tuple(data), metrics=len(metrics), human=human, protocol=protocol,
        tasks=tuple(f"{a}/{b}" for a, b in parsed), exclude_systems=excluded or None,
        significance="perm-both" if permute else "boot-inputs", resamples=k, alpha=alpha,
        human_ties=human_ties, recalibrate=bool(recalibrate), corpus_level=tuple(corpus_statistics) or None,
        seed=seed)
    return MtEvaluationResult(metrics, tuple(data), tuple(names), statistics, thresholds, scopes, averages, ranks,
                              pvalues, ranked, weights, task_pvalues, task_ranks, dropped, used, unjudged, protocol,
                              significance, human_ties, k, alpha, signature)


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
