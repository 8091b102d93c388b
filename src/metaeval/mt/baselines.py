"""Human baselines of :func:`metaeval.mt.evaluate.mt_evaluate`: a human scorer other than the gold (a second
rater, a rater wave, a second annotation such as mt-metrics-eval's ``human2`` score versions) scored against
the gold as if it were a metric (Proietti, Perrella & Navigli 2025), and the verdicts that say which metrics
are significantly above, level with or below it (docs/mt.md, "Human baselines").

A baseline enters every task, scope, significance cluster and output as one more scorer, under the same
permutation draws or bootstrap resamples as the metrics, so the tests between a metric and a baseline are the
paired tests between two metrics. The verdict of metric ``m`` against baseline ``b`` on a task (or a scope's
average), at level ``alpha``, from the one-sided p-values ``p[m, b]`` ("m beats b") and ``p[b, m]``:
``above`` when ``p[m, b] < alpha``, ``below`` when ``p[b, m] < alpha``, ``level`` otherwise, and
``untested`` when the p-values are NaN (``segments='per-metric'``, or a task without draws).
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data.scoreset import _suggestion
from ..errors import DataWarning, ParameterError

__all__ = ["HUMAN_MARK", "VERDICTS", "check_human_baselines", "verdict"]

#: The marker after a human baseline's name in tables, the paper formats and the figure.
HUMAN_MARK = "(human)"
VERDICTS = ("above", "level", "below", "untested")


def check_human_baselines(data: Mapping, golds: Mapping, metrics, baselines: Any, *,
                          param: str = "human_baselines", metric_param: str = "metrics") -> tuple[str, ...]:
    """``baselines`` as a tuple of scorer names, each a scorer of every language pair, never a gold nor a
    metric of the call; otherwise a one-line :class:`~metaeval.errors.ParameterError` naming ``param``."""
    if baselines is None:
        return ()
    items = (baselines,) if isinstance(baselines, str) else tuple(baselines)
    seen: set = set()
    for name in items:
        if not isinstance(name, str) or not name:
            raise ParameterError(f"`{param}` must hold scorer names; got {name!r}.")
        if name in seen:
            raise ParameterError(f"`{param}` must name each scorer once; got {name!r} twice.")
        seen.add(name)
        gold_of = [lp for lp, gold in golds.items() if gold == name]
        if gold_of:
            raise ParameterError(f"`{param}` must not name the gold; got {name!r}, the gold of language pair "
                                 f"{gold_of[0]!r} (a baseline is scored against the gold: name another human "
                                 f"scorer, e.g. a second rater or a rater wave).")
        for lp, ds in data.items():
            if name not in ds.scorers:
                raise ParameterError(f"`{param}` must name a scorer of language pair {lp!r}; got {name!r}"
                                     f"{_suggestion(name, tuple(ds.scorers))}.")
        if metrics is not None and name in metrics:
            raise ParameterError(f"`{param}` must not name a metric too; got {name!r} in `{metric_param}` as well.")
        inside = [gold for gold in dict.fromkeys(golds.values()) if name.startswith(f"{gold}.")]
        if inside:
            warnings.warn(f"human baseline {name!r} is part of the gold {inside[0]!r} (its raters are averaged into "
                          f"it), so it agrees with the gold partly by construction; for an independent baseline take "
                          f"a rater wave as the gold and another as the baseline.", DataWarning, stacklevel=3)
    return items


def verdict(p_above: float, p_below: float, alpha: float) -> str:
    """``'above'`` / ``'below'`` / ``'level'`` / ``'untested'`` of a metric against a baseline."""
    if not (np.isfinite(p_above) or np.isfinite(p_below)):
        return "untested"
    if np.isfinite(p_above) and p_above < alpha:
        return "above"
    if np.isfinite(p_below) and p_below < alpha:
        return "below"
    return "level"


def verdict_rows(metrics, baselines, alpha, items) -> list[dict]:
    """One record per (scope, task, baseline, metric): ``items`` yields ``(scope, task, values (P,), pvalues
    (P, P))`` with ``task = 'average'`` for a scope's ranking."""
    rows = []
    index = {m: i for i, m in enumerate(metrics)}
    for scope, task, values, pvalues in items:
        for b in baselines:
            j = index[b]
            for m in metrics:
                if m in baselines:
                    continue
                i = index[m]
                rows.append({"scope": scope, "task": task, "baseline": b, "metric": m,
                             "statistic": float(values[i]), "baseline_statistic": float(values[j]),
                             "p_above": float(pvalues[i, j]), "p_below": float(pvalues[j, i]),
                             "verdict": verdict(pvalues[i, j], pvalues[j, i], alpha)})
    return rows


def verdict_summary(rows) -> list[dict]:
    """The verdict records grouped per (scope, task, baseline): the metrics above, level with and below it
    (each list best first, comma-separated; ``-`` when empty)."""
    out: dict = {}
    for r in rows:
        key = (r["scope"], r["task"], r["baseline"])
        entry = out.setdefault(key, {"scope": key[0], "task": key[1], "baseline": key[2],
                                     "baseline_statistic": r["baseline_statistic"],
                                     **{v: [] for v in VERDICTS}})
        entry[r["verdict"]].append((-np.nan_to_num(r["statistic"], nan=-np.inf), r["metric"]))
    return [{**e, **{v: ", ".join(m for _, m in sorted(e[v], key=lambda t: t[0])) or "-" for v in VERDICTS}}
            for e in out.values()]
