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

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet, _suggestion
from ..errors import DataWarning, ParameterError, ScoreSetError, check_choice
from ..signature import Signature
from ..stats.mt.protocol import LANGUAGE_PAIRS, Protocol, normalized_weights
from ..stats.mt.significance import pooled_accuracy, pvalue_matrix, rank, task_range
from ..stats.resampling.draws import bootstrap_draws, count_weights
from ..stats.significance.clusters import significance_clusters
from ..vocabulary import MT_HUMAN_TIES, MT_SEGMENTS, MT_SIGNIFICANCE
from .baselines import check_human_baselines
from .result import POOLED, MtEvaluationResult
from .tasks import language_pair, run_task, segments_kept

__all__ = ["MtEvaluationResult", "exclusions", "mt_evaluate", "resolve_protocol"]


def exclusions(items, systems, param):
    """``{lp: set of systems}`` to leave out: ``'SYSTEM'`` in every language pair that has it, ``'LP=SYSTEM'``
    in language pair ``LP`` only. ``systems`` maps each language pair to its systems; an unknown language pair
    or system is a one-line error naming ``param`` (with the closest name)."""
    out = {lp: set() for lp in systems}
    known = tuple(dict.fromkeys(s for names in systems.values() for s in names))
    for item in items:
        if not isinstance(item, str):
            raise ParameterError(f"`{param}` must hold system names or 'LP=SYSTEM'; got {item!r}.")
        lp, sep, name = item.partition("=")
        if sep and lp in systems and item not in known:
            if name not in systems[lp]:
                raise ParameterError(f"`{param}` must name a system of language pair {lp!r}; got {name!r}"
                                     f"{_suggestion(name, tuple(systems[lp]))}.")
            out[lp].add(name)
            continue
        if item not in known:
            hint = (f" (language pairs: {', '.join(map(repr, systems))})" if sep
                    else _suggestion(item, known))
            raise ParameterError(f"`{param}` must name a system of the data or 'LP=SYSTEM'; got {item!r}{hint}.")
        for lp, names in systems.items():
            if item in names:
                out[lp].add(item)
    return out


def resolve_protocol(protocol, tasks=None, significance=None, human_ties=None) -> Protocol:
    """The :class:`Protocol` of a name or an instance, with the options given explicitly replacing its own."""
    if not isinstance(protocol, Protocol):
        from .protocol import load_protocol

        protocol = load_protocol(protocol)
    if tasks is not None:
        tasks = (tasks,) if isinstance(tasks, str) else tuple(tasks)
        if not tasks:
            raise ParameterError("`tasks` must name at least one task; got an empty list.")
        protocol = protocol.replace_tasks(tasks)
    if significance is not None:
        protocol = replace(protocol, significance=check_choice("significance", significance, MT_SIGNIFICANCE))
    if human_ties is not None:
        protocol = replace(protocol, human_ties=check_choice("human_ties", human_ties, MT_HUMAN_TIES))
    return protocol


def _golds(data, human, protocol):
    """``{lp: gold scorer}``: ``human`` (a name, or a mapping per language pair) over the protocol's gold over
    the data's only human scorer; every gold must be a scorer of its language pair."""
    per_lp = dict(human) if isinstance(human, Mapping) else {}
    unknown = [lp for lp in per_lp if lp not in data]
    if unknown:
        raise ParameterError(f"`human` must map language pairs of the data ({', '.join(map(repr, data))}) to "
                             f"scorers; got {unknown[0]!r}.")
    out = {}
    for lp, ds in data.items():
        gold = per_lp.get(lp) or (human if isinstance(human, str) else None) or protocol.gold_for(lp)
        if gold is None:
            if len(ds.humans) > 1:
                raise ParameterError(f"`human` must be given when the data has several human scorers; choose one of "
                                     f"{', '.join(map(repr, ds.humans))}; got None.")
            gold = ds.humans[0] if ds.humans else None
        if gold is None:
            raise ParameterError("`human` must name a human scorer; got None and the data has none.")
        if gold not in ds.scorers:
            humans = ", ".join(map(repr, ds.humans)) or "none"
            raise ParameterError(f"`human`: the gold of language pair {lp!r} must be one of its scorers; got {gold!r}"
                                 f" (its human scorers: {humans}; name one with human={{{lp!r}: NAME}} or"
                                 f" --human {lp}=NAME).")
        out[lp] = gold
    return out


def language_pair_data(data) -> dict:
    """``data`` (a ScoreSet, or language pair -> ScoreSet) checked, as {language pair: ScoreSet}."""
    if isinstance(data, ScoreSet):
        data = {data.name or "data": data}
    if not isinstance(data, Mapping) or not data:
        raise ParameterError(f"`data` must be a ScoreSet or a non-empty mapping of language pair -> ScoreSet; "
                             f"got {type(data).__name__}.")
    for lp, ds in data.items():
        if not isinstance(ds, ScoreSet):
            raise ParameterError(f"`data[{lp!r}]` must be a ScoreSet; got {type(ds).__name__}.")
    return {str(lp): ds for lp, ds in data.items()}


def _mt_iv(data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems, n_resamples, alpha,
           segments, system_scores, human_baselines=()):
    data = language_pair_data(data)
    protocol = resolve_protocol(protocol, tasks, significance, human_ties)
    segments = check_choice("segments", segments, MT_SEGMENTS)
    golds = _golds(data, human, protocol)
    excluded = (exclude_systems,) if isinstance(exclude_systems, str) else tuple(exclude_systems)
    per_lp = exclusions(excluded, {lp: ds.systems for lp, ds in data.items()}, "exclude_systems")
    all_golds = set(golds.values())
    first_lp, first = next(iter(data.items()))
    baselines = check_human_baselines(data, golds, metrics, human_baselines)
    if metrics is None:
        metrics = [s for s in first.scorers if s not in first.humans and s not in all_golds and s not in baselines]
    metrics = iv.check_metrics(first, metrics, golds[first_lp], minimum=1)
    clash = [m for m in metrics if m in all_golds]
    if clash:
        raise ParameterError(f"`metrics` must not hold a gold of some language pair; got {clash[0]!r}.")
    metrics = [*metrics, *baselines]  # scored as metrics, under the same draws (mt_baselines)
    out, dropped = {}, {}
    for lp, ds in data.items():
        keep = [s for s in ds.systems if s not in per_lp[lp]]
        ds = ds.subset(systems=keep) if len(keep) < len(ds.systems) else ds
        ds.require(golds[lp], param="human")
        iv.check_metrics(ds, metrics, golds[lp], minimum=1)
        dropped[lp] = {s: [n for n in (golds[lp], *metrics) if not np.isfinite(ds.matrix(n)[ds.systems.index(s)]).any()]
                       for s in ds.systems}
        dropped[lp] = {s: names for s, names in dropped[lp].items() if names}
        if dropped[lp]:
            items = list(dropped[lp].items())
            shown = "; ".join(f"{s!r} (no score of {', '.join(map(repr, n))})" for s, n in items[:3])
            shown += f" and {len(items) - 3} more" if len(items) > 3 else ""
            left = len(ds.systems) - len(items)
            if left < iv.MIN_SYSTEMS:
                raise ScoreSetError(f"language pair {lp!r} must keep at least {iv.MIN_SYSTEMS} systems scored by the"
                                     f" human and every metric; got {left} (left out {len(items)} without any score:"
                                     f" {shown}).")
            warnings.warn(f"language pair {lp!r}: left out {len(items)} system(s) without any score: {shown}.",
                          DataWarning, stacklevel=3)
            ds = ds.subset(systems=[s for s in ds.systems if s not in dropped[lp]])
        iv.check_level_design(ds, "system")
        out[lp] = ds
    for level, stat in ((t.level, t.statistic) for t in protocol.tasks):
        for lp, ds in out.items():
            if level != "system" and len(ds.inputs) < 2 or stat == "soft-accuracy" and len(ds.inputs) < 2:
                raise ParameterError(f"task '{level}/{stat}' needs segment scores; language pair {lp!r} has "
                                     f"{len(ds.inputs)} segment (system-level scores only).")
    fixed = _system_scores_iv(out, system_scores, [*metrics, *all_golds])
    return (out, metrics, golds, protocol, excluded, iv.check_n_resamples(n_resamples), iv.check_alpha(alpha),
            segments, dropped, fixed, baselines)


def _system_scores_iv(data, system_scores, scorers):
    """``{lp: {scorer: (N,) system scores}}`` for the scorers with a finite system score for every kept system."""
    if system_scores is None:
        return {lp: {} for lp in data}
    if not isinstance(system_scores, Mapping):
        raise ParameterError(f"`system_scores` must map language pairs to ScoreSets of system scores; got "
                             f"{type(system_scores).__name__}.")
    out = {}
    for lp, ds in data.items():
        sys_ds = system_scores.get(lp)
        out[lp] = {}
        if sys_ds is None:
            continue
        if not isinstance(sys_ds, ScoreSet) or len(sys_ds.inputs) != 1:
            raise ParameterError(f"`system_scores[{lp!r}]` must be a ScoreSet with one input (system scores); got "
                                 f"{type(sys_ds).__name__}.")
        rows = [sys_ds.systems.index(s) if s in sys_ds.systems else -1 for s in ds.systems]
        for scorer in scorers:
            if scorer not in sys_ds.scorers or min(rows) < 0:
                continue
            values = sys_ds.matrix(scorer)[rows, 0]
            if np.isfinite(values).all():
                out[lp][scorer] = values.astype(np.float64)
    return out


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
    (data, metrics, golds, protocol, excluded, k, alpha, segments, systems_dropped, fixed, baselines) = _mt_iv(
        data, metrics, human, protocol, tasks, significance, human_ties, exclude_systems, n_resamples, alpha,
        segments, system_scores, human_baselines)
    permute = protocol.significance == "permutation"
    rtol = iv.check_tie_tolerance(tie_tolerance)
    darr_threshold = _darr_threshold_iv(darr_threshold)
    if recalibrate and permute:
        raise ParameterError("`recalibrate` must be False with significance='permutation' (the pairs test of "
                             "acc23 keeps each metric's calibrated threshold); got True.")
    gen, seed = iv.rng_and_seed(rng)
    corpus_statistics = _corpus_iv(data, corpus_statistics)
    parsed = tuple((t.level, t.statistic) for t in protocol.tasks)
    if permute and corpus_statistics and any(stat == "soft-accuracy" for _, stat in parsed):
        raise ParameterError("`significance` must be 'bootstrap' for soft pairwise accuracy with corpus metrics "
                             "(their segment cells cannot be exchanged); got 'permutation'.")
    common = segments == "common"
    p = len(metrics)
    names = [f"{lp}:{level}/{stat}" for lp in data for level, stat in parsed]
    obs = {name: np.full(p, np.nan) for name in names}
    draws, thresholds = {}, {}
    pooled = {i: [] for i in range(p)} if common else {i: [] for i in range(p)}
    dropped, used, lacking, per_metric = {}, {}, {}, {}
    options = dict(permute=permute, gen=gen, k=k, recalibrate=recalibrate, spa_permutations=spa_permutations,
                   pvalue=protocol.pvalue, human_ties=protocol.human_ties, darr_threshold=darr_threshold, rtol=rtol)
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
                                                      rng=gen).col_indices(), n_cols)
            for i in idx:
                per_metric[lp][metrics[i]] = n_cols
            for level, stat in parsed:
                name = f"{lp}:{level}/{stat}"
                o, r, eps = run_task(lpd, level, stat, draws=common, metrics=names_i, **options)
                obs[name][idx] = np.asarray(o, dtype=float)
                if common:
                    draws[name] = r
                if eps is not None:
                    thresholds.setdefault(name, np.full(p, np.nan))[idx] = eps
                if level == "system" and stat == "accuracy":
                    for i in idx:
                        pooled[i].append((lpd.xbar, lpd.zbar, lpd.scorer, lpd.z, lpd.w, lpd.zscorer))
                if progress is not None and (common or idx[0] == p - 1):
                    progress()
        used[lp] = int(any_used.sum())
        dropped[lp] = int((scored & ~any_used).sum())
    if any(pooled.values()):
        name = f"{POOLED}:system/accuracy"
        names.append(name)
        if common:
            obs[name], draws[name] = pooled_accuracy(pooled[0], p, protocol.human_ties, permute, gen, k, rtol=rtol)
        else:
            obs[name] = np.array([pooled_accuracy([(xb[:1], zb, *rest) for xb, zb, *rest in pooled[i]], 1,
                                                  protocol.human_ties, permute, gen, k, draws=False, rtol=rtol)[0][0]
                                  for i in range(p)])
    statistics = np.array([obs[n] for n in names], dtype=float)
    task_pvalues, task_ranks = {}, {}
    for t, name in enumerate(names):
        if common:
            pv = pvalue_matrix(statistics[t], draws[name], permute, protocol.pvalue)
            task_ranks[name] = significance_clusters(statistics[t], pv, alpha=alpha)
        else:
            pv = np.full((p, p), np.nan)
            task_ranks[name] = rank(statistics, None, [t], [1.0], [(0.0, 1.0)], permute, protocol.pvalue, alpha, p,
                                    test=False)[1]
        task_pvalues[name] = pv
    averages, ranks, pvalues, ranked, weights = _scopes(data, names, statistics, draws, protocol, common, permute,
                                                        alpha, p)
    fields = dict(language_pairs=tuple(data), metrics=len(metrics),
                  human=next(iter(golds.values())) if len(set(golds.values())) == 1
                  else ",".join(f"{lp}={g}" for lp, g in golds.items()),
                  protocol=protocol.name, tasks=tuple(f"{a}/{b}" for a, b in parsed), exclude_systems=excluded or None)
    if baselines:
        fields["human_baselines"] = baselines
    if not common:
        fields["segments"] = segments
    fields.update(significance=("perm-both" if permute else "boot-inputs") if common else "none", resamples=k,
                  alpha=alpha, human_ties=protocol.human_ties, recalibrate=bool(recalibrate))
    system_level = ",".join(sorted({n for v in fixed.values() for n in v}))
    if system_level:
        fields["system_level"] = system_level
    signature = Signature.of(**fields, corpus_level=tuple(corpus_statistics) or None, seed=seed, **iv.tie_field(rtol))
    unjudged = {lp: [s for s, n in systems_dropped[lp].items() if golds[lp] in n] for lp in data}
    return MtEvaluationResult(
        metrics, tuple(data), tuple(names), statistics, thresholds, tuple(data) + (POOLED,), averages, ranks,
        pvalues, ranked, weights, task_pvalues, task_ranks, dropped, used, unjudged, protocol.name,
        protocol.significance if common else "none", protocol.human_ties, k, alpha, segments, lacking, per_metric,
        systems_dropped, {lp: tuple(sorted(v)) for lp, v in fixed.items() if v}, golds, signature, baselines)


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
