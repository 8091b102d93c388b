"""The result of :func:`metaeval.mt.evaluate.mt_evaluate`: statistics, averages, p-values and clusters
per language pair and pooled, with what was left out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import defaults
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.significance.clusters import rank_ranges
from .baselines import HUMAN_MARK, verdict_rows, verdict_summary

__all__ = ["POOLED", "MtEvaluationResult"]

POOLED = "pooled"


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
        Language pair -> segments left out because some system, metric or the human lacks a score (common
        segments; per metric: the segments of the language pair no metric uses).
    n_segments : dict
        Language pair -> segments used (per metric: the segments some metric uses).
    systems_without_human : dict
        Language pair -> systems left out because the human scored none of their segments.
    protocol, significance, human_ties : str
        The protocol's name and the test and human-tie rule in effect.
    segments : {'common', 'per-metric'}
        Every metric on the segments all metrics and the human scored, or each metric on its own.
    segments_lacking : dict
        Language pair -> {scorer: segments it has no score for (some kept system lacks it)}: what causes the
        drops, named.
    metric_segments : dict
        Language pair -> {metric: segments used}.
    systems_dropped : dict
        Language pair -> {system: scorers with no score at all for it}: systems left out of the language pair
        (the rule of ``correlate``, :func:`metaeval._validation.scored_systems`).
    system_level : dict
        Language pair -> scorers whose system-level scores are their own system scores (``system_scores=``,
        mt-metrics-eval's ``*.sys.score`` files) instead of the mean of their segment scores.
    gold : dict
        Language pair -> the human scorer used as gold.
    n_resamples : int
    alpha : float
    signature : Signature
    intervals : dict
        Task -> (P, 2) percentile interval of its statistic at level ``1 - alpha`` over bootstrap resamples of the
        segments (under the bootstrap test its own resamples; under the permutation test only with
        ``intervals=True``); empty when none was drawn. Soft pairwise accuracy has none.
    average_intervals : dict
        Scope -> (P, 2) percentile interval of the average (weighted sums of the tasks' resamples).
    human_baselines : tuple of str
        The scorers of ``metrics`` that are human baselines (the last ones), scored like the metrics; the
        outputs mark them ``(human)`` and :meth:`baseline_verdicts` compares every metric with each.
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
    segments: str = defaults.MT_SEGMENTS
    segments_lacking: dict = field(default_factory=dict)
    metric_segments: dict = field(default_factory=dict)
    systems_dropped: dict = field(default_factory=dict)
    system_level: dict = field(default_factory=dict)
    gold: dict = field(default_factory=dict)
    signature: Signature | None = None
    human_baselines: tuple = ()
    intervals: dict = field(default_factory=dict)
    average_intervals: dict = field(default_factory=dict)

    def label(self, metric: str) -> str:
        """``metric``'s name as the tables show it: a human baseline, or a rater of the gold scored as a metric
        (``mqm.rater1`` beside the gold ``mqm``: part of the gold), marked ``(human)``."""
        rater = any(metric.startswith(f"{gold}.") for gold in set(self.gold.values()))
        return f"{metric} {HUMAN_MARK}" if metric in self.human_baselines or rater else metric

    def _verdict_items(self):
        for scope in self.scopes:
            yield scope, "average", self.averages[scope], self.pvalues[scope]
        for t, task in enumerate(self.tasks):
            scope, name = task.split(":", 1)
            yield scope, name, self.statistics[t], self.task_pvalues[task]

    def baseline_verdicts(self, summary: bool = False) -> list[dict[str, Any]]:
        """Every metric against every human baseline, per scope's average and per task: ``above`` (the
        metric significantly beats the baseline, ``p_above < alpha``), ``below`` (``p_below < alpha``),
        ``level`` or ``untested`` (no p-values), with both statistics. ``summary=True``: one record per
        (scope, task, baseline) listing the metrics ``above``, ``level``, ``below`` and ``untested``."""
        rows = verdict_rows(self.metrics, self.human_baselines, self.alpha, self._verdict_items())
        return verdict_summary(rows) if summary else rows

    def to_dict(self) -> dict[str, Any]:
        """The fields; with human baselines also ``baseline_verdicts`` (:meth:`baseline_verdicts`)."""
        out = super().to_dict()
        for name in ("intervals", "average_intervals"):  # none drawn: the output as before intervals existed
            if not out.get(name):
                out.pop(name, None)
        if self.human_baselines:
            out["baseline_verdicts"] = [{k: plain(v) for k, v in r.items()} for r in self.baseline_verdicts()]
        return out

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per scope or task and metric (long format, the CSV): the statistic (a scope's average),
        the cluster rank and the p-values ``p_vs_<metric>`` of "this metric beats that one"; with human
        baselines a column ``human`` (True for a baseline's rows)."""
        rows = []

        def add(scope, task, values, ranks, pvalues):
            for i, metric in enumerate(self.metrics):
                row = {"scope": scope, "task": task, "metric": metric, "statistic": float(values[i]),
                       "rank": int(ranks[i])}
                if self.intervals:
                    bounds = (self.average_intervals.get(scope) if task == "average"
                              else self.intervals.get(f"{scope}:{task}"))
                    row["low"], row["high"] = ((float(bounds[i, 0]), float(bounds[i, 1])) if bounds is not None
                                               else (float("nan"), float("nan")))
                if self.human_baselines:
                    row["human"] = metric in self.human_baselines
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
        scope's task statistics; with human baselines a column ``human``."""
        import pandas as pd

        return pd.DataFrame(self._ranking_rows(scope))

    def _ranking_rows(self, scope, marked=False):
        order = np.argsort(-np.nan_to_num(self.averages[scope], nan=-np.inf), kind="stable")
        ranges = rank_ranges(self.ranks[scope][order])
        rows = []
        for pos, i in enumerate(order):
            span = ranges[pos] if "-" in ranges[pos] else f"{ranges[pos]}-{ranges[pos]}"  # text, never a number
            metric = self.metrics[i]
            row = {"scope": scope, "metric": self.label(metric) if marked else metric,
                   **({"human": metric in self.human_baselines} if self.human_baselines and not marked else {}),
                   "rank": int(self.ranks[scope][i]), "positions": span, "average": float(self.averages[scope][i])}
            for t, task in enumerate(self.tasks):
                if task.startswith(scope + ":"):
                    row[task.split(":", 1)[1]] = float(self.statistics[t, i])
            rows.append(row)
        return rows

    def ranking_frame(self, marked: bool = False):
        """Every scope's ranking (:meth:`table`) in one DataFrame, the terminal table of ``metaeval mt``;
        ``marked``: human baselines named ``NAME (human)`` instead of a column ``human``."""
        import pandas as pd

        return pd.DataFrame([r for scope in self.scopes for r in self._ranking_rows(scope, marked)])

    def interval_frame(self, marked: bool = False):
        """The percentile intervals (:attr:`intervals`, :attr:`average_intervals`) as a DataFrame: one row per
        scope and metric (best first, as :meth:`ranking_frame`), a column per task and ``average`` holding
        ``'[low, high]'`` (``'-'`` where the task has none, e.g. soft pairwise accuracy); empty without
        intervals."""
        import pandas as pd

        def text(bounds, i):
            if bounds is None or not np.isfinite(bounds[i]).all():
                return "-"
            return f"[{bounds[i, 0]:.3f}, {bounds[i, 1]:.3f}]"

        rows = []
        if not self.intervals:
            return pd.DataFrame(rows)
        for scope in self.scopes:
            order = np.argsort(-np.nan_to_num(self.averages[scope], nan=-np.inf), kind="stable")
            for i in order:
                row = {"scope": scope, "metric": self.label(self.metrics[i]) if marked else self.metrics[i],
                       "average": text(self.average_intervals.get(scope), i)}
                for task in self.tasks:
                    if task.startswith(scope + ":"):
                        row[task.split(":", 1)[1]] = text(self.intervals.get(task), i)
                rows.append(row)
        return pd.DataFrame(rows)

    def notes(self) -> list[str]:
        """Lines to print under the ranking: systems and segments each language pair left out (naming what
        lacks the scores), per-metric segments, and the system scores taken from system-score files."""
        out = []
        for lp in self.language_pairs:
            for system, names in self.systems_dropped.get(lp, {}).items():
                out.append(f"{lp}: system {system!r} left out (no score of {', '.join(map(repr, names))})")
            lacking = self.segments_lacking.get(lp, {})
            causes = ", ".join(f"{name} lacks {count}" for name, count in
                               sorted(lacking.items(), key=lambda kv: -kv[1]) if count)
            total = self.n_segments_dropped.get(lp, 0) + self.n_segments.get(lp, 0)
            if self.segments == "per-metric":
                used = self.metric_segments.get(lp, {})
                if len(set(used.values())) > 1 or self.n_segments_dropped.get(lp, 0):
                    out.append(f"{lp}: each metric on its own segments of {total} ("
                               + ", ".join(f"{m} {n}" for m, n in used.items()) + f"; {causes})")
            elif self.n_segments_dropped.get(lp, 0):
                dropped = self.n_segments_dropped[lp]
                out.append(f"{lp}: {dropped} of {total} segments dropped ({100 * dropped / total:.0f}%: {causes}"
                           "; --segments per-metric keeps each metric's own)")
            if self.system_level.get(lp):
                out.append(f"{lp}: system level from system-score files for {', '.join(self.system_level[lp])}"
                           " (the others: mean of the segments)")
        return out
