"""Machine-translation meta-evaluation the WMT way: several language pairs, several tasks, one ranking.

:func:`mt_evaluate` takes one ScoreSet per language pair (a mapping ``{lp: ScoreSet}``, e.g. what an
mt-metrics-eval reader returns, or one ScoreSet), computes every task ``level/statistic`` of a protocol
(:class:`metaeval.stats.mt.protocol.Protocol`) for every metric in every language pair, and ranks the metrics
per language pair and pooled over all of them by a weighted average of their task statistics, with
significance clusters. The default protocol reproduces the WMT23 metrics task as mt-metrics-eval computes it
(Freitag et al. 2023). The tasks by kind are in :mod:`metaeval.mt.tasks`, the numerics in
:mod:`metaeval.stats.mt`. See docs/mt.md for the formulas and decisions.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError
from ..signature import Signature
from ..stats.mt.protocol import LANGUAGE_PAIRS, Protocol, normalized_weights
from ..stats.mt.significance import pvalue_matrix, rank, task_range
from ..stats.resampling.draws import bootstrap_draws, count_weights
from ..stats.significance.clusters import significance_clusters
from .checks import _corpus_iv, _mt_iv, _names, _options_iv, _waves, language_pair_data
from .protocol import protocol_hash
from .result import POOLED, MtEvaluationResult
from .streams import root_seed, stream
from .tasks import Draws, PooledAccuracyTask, TaskSettings, language_pair, make_task, segments_kept

__all__ = ["MtEvaluationResult", "mt_evaluate"]


def mt_evaluate(
    data: ScoreSet | Mapping[str, ScoreSet],
    metrics: Sequence[str] | None = None,
    human: str | Mapping[str, str] | None = None,
    *,
    protocol: str | Protocol = defaults.MT_PROTOCOL,
    tasks: Sequence[str] | None = None,
    significance: str | None = None,
    human_ties: str | None = None,
    exclude_systems: Sequence[str] = (),
    human_baselines: Sequence[str] = (),
    n_resamples: int = defaults.N_RESAMPLES,
    alpha: float = defaults.ALPHA,
    recalibrate: bool = defaults.MT_RECALIBRATE,
    darr_threshold: float = defaults.MT_DARR_THRESHOLD,
    spa_permutations: int = defaults.MT_SPA_PERMUTATIONS,
    segments: str = defaults.MT_SEGMENTS,
    system_scores: Mapping[str, ScoreSet] | None = None,
    corpus_statistics: Mapping[str, Mapping[str, Any]] | None = None,
    rng: Any = None,
    progress: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
    rater_waves: int | None = None,
    params: Mapping[str, str] | None = None,
    intervals: bool = False,
) -> MtEvaluationResult:
    """WMT-style meta-evaluation of MT metrics over one or several language pairs.

    Parameters
    ----------
    data : ScoreSet or mapping of str to ScoreSet
        One ScoreSet (systems x segments) per language pair.
    metrics : list of str, optional
        Metrics present in every language pair (default: every non-human scorer of the first); one is enough.
    human : str or mapping of str to str, optional
        The human scorer (the gold), e.g. MQM or DA z-scores, or ``{lp: scorer}`` per language pair
        (default: the protocol's gold, else the only human scorer; required when the data has several).
    protocol : str or Protocol
        The protocol (:class:`metaeval.stats.mt.protocol.Protocol`): its tasks, averaging, test, human-tie
        rule, p-value convention and gold; a name of :data:`metaeval.stats.mt.protocol.PROTOCOLS` (default
        :data:`metaeval.defaults.MT_PROTOCOL`). ``'wmt23'``, ``'wmt24'`` and ``'wmt25'`` reproduce
        mt-metrics-eval's ``tasks.WMT23`` / ``WMT24`` / ``WMT25``; ``'mean'`` is the plain mean of the task
        statistics.
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
        Systems left out: ``'SYSTEM'`` in every language pair that has it (e.g. human references ``refA``),
        ``'LP=SYSTEM'`` in language pair ``LP`` only (each pair's own reference); references kept in the
        data are ranked as systems.
    human_baselines : list of str
        Human scorers other than the gold (a second rater, a rater wave of
        :func:`metaeval.human.waves.rater_waves`, a second annotation) scored against the gold as if they were
        metrics, in every task, scope and cluster, under the same draws, and marked as human
        (``human_baselines`` in the result; :meth:`MtEvaluationResult.baseline_verdicts` says which metrics
        are significantly above, level with or below each; Proietti, Perrella & Navigli 2025). A baseline that
        is a gold or is missing from a language pair is an error.
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
    segments : {'common', 'per-metric'}
        ``'common'`` (default, :data:`metaeval.defaults.MT_SEGMENTS`, as WMT): every metric on the segments
        that every metric and the human scored, so that the paired tests compare metrics on one set of
        segments; ``'per-metric'``: each metric on the segments it and the human scored, so a metric's result
        does not depend on the other metrics in the call - no test between metrics then (p-values NaN, ranks
        by the average).
    system_scores : mapping, optional
        ``{lp: ScoreSet}`` of system-level scores (one input; e.g. ``read_mt_metrics_eval(root, lp,
        level='sys')``): a metric or the human with a score for every kept system uses it at system level
        (WMT's system scores, e.g. corpus BLEU over all segments) instead of the mean of its segment scores;
        listed in ``system_level``.
    corpus_statistics : mapping, optional
        ``{metric: {lp: corpus}}`` with ``corpus`` a :class:`metaeval.stats.corpus.CorpusScores` (e.g. from
        :func:`metaeval.scoring.corpus.corpus_statistics`) or a pair ``(statistics (N, M, S), aggregate)``
        aligned with that language pair's systems and segments: system-level scores of these metrics are
        corpus scores from summed sufficient statistics.
    rng : None, int or numpy.random.Generator
    progress : callable, optional
        Called with no argument after each task of each language pair (for progress bars).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.
    rater_waves : int, optional
        Split each segment's raters at random into this many waves before anything else
        (:func:`metaeval.human.waves.rater_waves`, ``<human>.wave1`` ...; the data must hold per-rater scores,
        e.g. from :func:`metaeval.read_mqm_ratings`), from the stream ``numpy.random.default_rng((seed, 1))``
        of an integer ``rng``; a wave can then be the gold (``human``) or a baseline (``human_baselines``).
        Recorded in the signature (``rater_waves``).
    intervals : bool
        Also under the permutation test, draw ``n_resamples`` bootstrap resamples of the segments of each
        language pair (its own stream ``('mt', lp, 'intervals')``, so the test's draws do not move) and give every
        task statistic and average its percentile interval (``intervals``, ``average_intervals``; recorded in the
        signature as ``intervals:boot-inputs``). Under the bootstrap test the intervals come from the test's own
        resamples and are always given. Soft pairwise accuracy has no resampled statistic (NaN interval).
    params : mapping of str to str, optional
        The names errors give to ``human``, ``metrics``, ``exclude_systems``, ``human_baselines``,
        ``n_resamples``, ``rater_waves`` and ``intervals`` (the CLI passes its flags, e.g. ``{'human': '--human'}``).

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
    names = _names(params)
    seed = root_seed(rng)  # every stream is keyed by what it serves (metaeval.mt.streams)
    if rater_waves is not None:
        data = _waves(language_pair_data(data), rater_waves, seed, names["rater_waves"])
    checked = _mt_iv(data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems, n_resamples,
                     alpha, segments, system_scores, human_baselines, names)
    data, metrics, golds, protocol = checked.data, checked.metrics, checked.golds, checked.protocol
    k, alpha, segments, fixed = checked.n_resamples, checked.alpha, checked.segments, checked.system_scores
    permute = protocol.significance == "permutation"
    rtol = iv.check_tie_tolerance(tie_tolerance)
    darr_threshold = _darr_threshold_iv(darr_threshold)
    corpus_statistics = _corpus_iv(data, corpus_statistics)
    parsed = tuple((t.level, t.statistic) for t in protocol.tasks)
    _options_iv(permute, recalibrate, corpus_statistics, parsed)
    common = segments == "common"
    if not isinstance(intervals, (bool, np.bool_)):
        raise ParameterError(f"`{names['intervals']}` must be True or False; got {intervals!r}.")
    if intervals and not common:  # each metric on its own segments: no shared resamples to draw
        raise ParameterError(f"`{names['intervals']}` must not be given with segments 'per-metric' (each metric on its"
                             " own segments draws no resamples); got it.")
    p = len(metrics)
    settings = TaskSettings(recalibrate=bool(recalibrate), spa_permutations=spa_permutations, pvalue=protocol.pvalue,
                            human_ties=protocol.human_ties, darr_threshold=darr_threshold, rtol=rtol)
    runs = [make_task(level, stat, settings) for level, stat in parsed]
    draws_of = Draws(permute=permute, k=k, gen=None, keep=common, root=seed)
    task_names = [f"{lp}:{task.name}" for lp in data for task in runs]
    obs = {name: np.full(p, np.nan) for name in task_names}
    draws, thresholds = {}, {}
    resampled, interval_lps = {}, []  # task -> (P, k) bootstrap statistics of the intervals; their language pairs
    pooled = {i: [] for i in range(p)}  # metric -> the language pairs of the pooled accuracy (common: all in 0)
    dropped, used, lacking, per_metric = {}, {}, {}, {}
    for lp, ds in data.items():
        human = golds[lp]
        corpus = {m: per_lp[lp] for m, per_lp in corpus_statistics.items()}
        rows = np.ones(len(ds.systems), dtype=bool)
        judged = np.isfinite(ds.matrix(human)).all(axis=0)
        lacking[lp] = {name: int((judged & ~np.isfinite(ds.matrix(name)).all(axis=0)).sum()) for name in metrics}
        lacking[lp][human] = int((~judged).sum())
        groups = [(list(range(p)), segments_kept(ds, metrics, human, corpus, rows))] if common else [
            ([i], segments_kept(ds, [metrics[i]], human, {m: c for m, c in corpus.items() if m == metrics[i]}, rows))
            for i in range(p)]
        scored = np.isfinite(ds.matrix(human)).any(axis=0)
        any_used = np.zeros(len(ds.inputs), dtype=bool)
        per_metric[lp] = {}
        for idx, cols in groups:
            n_cols = int(cols.sum())
            if ds.shape[0] < iv.MIN_SYSTEMS or n_cols == 0:
                # names the language pair, not a Python expression: the CLI shows it as it is
                raise ParameterError(f"language pair {lp!r} must keep at least {iv.MIN_SYSTEMS} systems with human "
                                     f"scores and one segment scored by every metric and the human; got "
                                     f"{ds.shape[0]} systems, {n_cols} segments"
                                     + (f" for metric {metrics[idx[0]]!r}" if not common else "") + ".")
            any_used |= cols
            names_i = [metrics[i] for i in idx]
            lpd = language_pair(ds, names_i, human, {m: c for m, c in corpus.items() if m in names_i},
                                {n: v for n, v in fixed[lp].items() if n in names_i or n == human}, cols)
            if not permute and common:
                lpd.w = count_weights(bootstrap_draws(lpd.z.shape[0], n_cols, method="inputs", n_resamples=k,
                                                      rng=stream(seed, "mt", lp, "segments")).col_indices(), n_cols)
            for i in idx:
                per_metric[lp][metrics[i]] = n_cols
            boot = None  # the intervals' own resamples under the permutation test
            if permute and common and intervals:
                boot = replace(lpd, w=count_weights(bootstrap_draws(
                    lpd.z.shape[0], n_cols, method="inputs", n_resamples=k,
                    rng=stream(seed, "mt", lp, "intervals")).col_indices(), n_cols))
                interval_lps.append(boot)
            for task in runs:
                name = f"{lp}:{task.name}"
                if boot is not None and task.statistic != "soft-accuracy":  # no resampled statistic (see its Task)
                    resampled[name] = task.run(boot, Draws(permute=False, k=k, gen=stream(seed, "mt", lp, task.name,
                                                                                        "intervals"))).draws
                outcome = task.run(lpd, draws_of.keyed("mt", lp, task.name))
                obs[name][idx] = np.asarray(outcome.observed, dtype=float)
                if common:
                    draws[name] = outcome.draws
                if outcome.thresholds is not None:
                    thresholds.setdefault(name, np.full(p, np.nan))[idx] = outcome.thresholds
                if task.name == "system/accuracy":
                    pooled[idx[0]].append(lpd)
                if progress is not None and (common or idx[0] == p - 1):
                    progress()
        used[lp] = int(any_used.sum())
        dropped[lp] = int((scored & ~any_used).sum())
    if any(pooled.values()):  # the pooled accuracy: a task over every language pair
        name = f"{POOLED}:system/accuracy"
        task_names.append(name)
        pooled_task = PooledAccuracyTask(settings)
        if common:
            outcome = pooled_task.run(pooled[0], draws_of.keyed("mt", POOLED, pooled_task.name))
            obs[name], draws[name] = outcome.observed, outcome.draws
            if interval_lps:
                resampled[name] = pooled_task.run(interval_lps, Draws(permute=False, k=k, gen=None)).draws
        else:
            obs[name] = np.array([pooled_task.run(pooled[i], draws_of).observed[0] for i in range(p)])
    statistics = np.array([obs[n] for n in task_names], dtype=float)
    task_pvalues, task_ranks = {}, {}
    for t, name in enumerate(task_names):
        if common:
            pv = pvalue_matrix(statistics[t], draws[name], permute, protocol.pvalue)
            task_ranks[name] = significance_clusters(statistics[t], pv, alpha=alpha)
        else:
            pv = np.full((p, p), np.nan)
            task_ranks[name] = rank(statistics, None, [t], [1.0], [(0.0, 1.0)], permute, protocol.pvalue, alpha, p,
                                    test=False)[1]
        task_pvalues[name] = pv
    averages, ranks, pvalues, ranked, weights = _scopes(data, task_names, statistics, draws, protocol, common, permute,
                                                        alpha, p)
    if common and not permute:
        resampled = draws
    task_intervals, average_intervals = _intervals(resampled, task_names, ranked, weights, protocol, alpha)
    signature = _signature(checked, parsed, common, permute, k, alpha, recalibrate, fixed, corpus_statistics, seed,
                           rtol, rater_waves, bool(resampled) and permute)
    unjudged = {lp: [s for s, n in checked.systems_dropped[lp].items() if golds[lp] in n] for lp in data}
    return MtEvaluationResult(
        metrics=metrics, language_pairs=tuple(data), tasks=tuple(task_names), statistics=statistics,
        tie_thresholds=thresholds, scopes=tuple(data) + (POOLED,), averages=averages, ranks=ranks, pvalues=pvalues,
        ranked_tasks=ranked, weights=weights, task_pvalues=task_pvalues, task_ranks=task_ranks,
        n_segments_dropped=dropped, n_segments=used, systems_without_human=unjudged, protocol=protocol.name,
        significance=protocol.significance if common else "none", human_ties=protocol.human_ties, n_resamples=k,
        alpha=alpha, segments=segments, segments_lacking=lacking, metric_segments=per_metric,
        systems_dropped=checked.systems_dropped, system_level={lp: tuple(sorted(v)) for lp, v in fixed.items() if v},
        gold=golds, signature=signature, human_baselines=checked.baselines, intervals=task_intervals,
        average_intervals=average_intervals)


def _signature(checked, parsed, common, permute, k, alpha, recalibrate, fixed, corpus_statistics, seed, rtol,
               rater_waves, intervals=False):
    """The signature of :func:`mt_evaluate`, complete when the result is built."""
    golds, protocol = checked.golds, checked.protocol
    # the metrics by name (baselines included, in the order of the result), so the signature rebuilds the result
    fields = dict(language_pairs=tuple(checked.data), metrics=tuple(checked.metrics),
                  human=next(iter(golds.values())) if len(set(golds.values())) == 1
                  else ",".join(f"{lp}={g}" for lp, g in golds.items()),
                  protocol=protocol.name, protocol_hash=protocol_hash(protocol),
                  tasks=tuple(f"{a}/{b}" for a, b in parsed),
                  exclude_systems=checked.excluded or None)
    if checked.baselines:
        fields["human_baselines"] = checked.baselines
    subsets = dict.fromkeys(d for d in checked.descriptions.values() if d)
    if subsets:  # what the data are, e.g. an MQM ratings file's error weights (as ``subset:`` in correlate)
        fields["subset"] = (next(iter(subsets)) if len(subsets) == 1 and all(checked.descriptions.values())
                            else ";".join(f"{lp}={d}" for lp, d in checked.descriptions.items() if d))
    if not common:
        fields["segments"] = checked.segments
    fields.update(significance=("perm-both" if permute else "boot-inputs") if common else "none", resamples=k,
                  alpha=alpha, human_ties=protocol.human_ties, recalibrate=bool(recalibrate))
    system_level = ",".join(sorted({n for v in fixed.values() for n in v}))
    if system_level:
        fields["system_level"] = system_level
    texts = tuple(dict.fromkeys(c.source for per_lp in corpus_statistics.values() for c in per_lp.values() if c.source))
    fields.update(corpus_level=tuple(corpus_statistics) or None,
                  **({"corpus_texts": ";".join(texts)} if texts else {}), seed=seed, **iv.tie_field(rtol))
    if rater_waves is not None:
        fields["rater_waves"] = rater_waves
    if intervals:  # under the permutation test, the intervals' own bootstrap (under the bootstrap: the test's)
        fields["intervals"] = "boot-inputs"
    return Signature.of(**fields)


def percentile_interval(samples, alpha: float) -> np.ndarray:
    """(P, 2) percentile interval at level ``1 - alpha`` of resampled statistics ``samples`` (P, k): the
    ``alpha/2`` and ``1 - alpha/2`` percentiles (numpy's linear rule) of each row's defined resamples; NaN
    where a row has none (a resample with an undefined statistic is left out)."""
    samples = np.asarray(samples, dtype=float)
    out = np.full((samples.shape[0], 2), np.nan)
    for i, row in enumerate(samples):
        row = row[np.isfinite(row)]
        if row.size:
            out[i] = np.percentile(row, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return out


def _intervals(resampled, names, ranked, weights, protocol, alpha):
    """Each task's and each scope average's percentile interval from the bootstrap statistics ``resampled``
    (task -> (P, k) or None); the average's resamples are the weighted sums of its tasks' (as the test's)."""
    if not resampled:
        return {}, {}
    tasks = {n: percentile_interval(resampled[n], alpha) for n in names if resampled.get(n) is not None}
    averages = {}
    for scope, used in ranked.items():
        if not used or any(resampled.get(n) is None for n in used):
            continue
        ranges = [task_range(n.rsplit("/", 1)[1]) if protocol.rescaling == "wmt" else (0.0, 1.0) for n in used]
        avg = sum(w * (np.asarray(resampled[n], dtype=float) - lo) / (hi - lo)
                  for n, w, (lo, hi) in zip(used, weights[scope], ranges))
        averages[scope] = percentile_interval(avg, alpha)
    return tasks, averages



def _darr_threshold_iv(darr_threshold) -> float:
    """A DARR pair's minimum human difference: a finite number >= 0 (NaN compared False with every
    difference and silently left no pair)."""
    if (isinstance(darr_threshold, bool) or not isinstance(darr_threshold, (int, float, np.integer, np.floating))
            or not np.isfinite(darr_threshold) or darr_threshold < 0):
        raise ParameterError(f"`darr_threshold` must be a finite number >= 0; got {darr_threshold!r}.")
    return float(darr_threshold)


def _scopes(data, names, statistics, draws, protocol, common, permute, alpha, p):
    """Every scope's weighted average, its p-values and cluster ranks, and what was averaged."""
    weight_of = {f"{lp}:{t.name}": t.weight for lp in data for t in protocol.tasks}
    n_lp = len(data)
    pooled_weight = n_lp if protocol.pooled_weight == LANGUAGE_PAIRS else protocol.pooled_weight
    pooled = any(n.startswith(POOLED + ":") for n in names)
    averages, ranks, pvalues, ranked, weights = {}, {}, {}, {}, {}
    for scope in (*data, POOLED):
        if scope == POOLED:
            use = [t for t, n in enumerate(names)
                   if n.startswith(POOLED + ":") or not (pooled and n.endswith(":system/accuracy"))]
        else:
            use = [t for t, n in enumerate(names) if n.startswith(scope + ":")]
        use = [t for t in use if np.isfinite(statistics[t]).all() and (not common or draws[names[t]] is not None)]
        raw = np.array([pooled_weight if names[t].startswith(POOLED + ":") else weight_of[names[t]] for t in use])
        wts = normalized_weights(raw)  # overflow-free: weights of 1.7e308 are shares, not inf / inf
        ranked[scope], weights[scope] = tuple(names[t] for t in use), tuple(float(v) for v in wts)
        ranges = [task_range(names[t].rsplit("/", 1)[1]) if protocol.rescaling == "wmt" else (0.0, 1.0) for t in use]
        averages[scope], ranks[scope], pvalues[scope] = rank(
            statistics, [draws.get(n) for n in names] if common else None, use, wts, ranges, permute,
            protocol.pvalue, alpha, p, test=common)
    return averages, ranks, pvalues, ranked, weights
