"""Result objects returned by metaeval's public functions.

Every result is a frozen dataclass with the point estimate ``statistic``, an interval ``ci`` (or None),
a ``pvalue`` (or None), the counts ``n_used`` / ``n_skipped`` of groups (inputs at summary level,
systems at by-system level, ...) that entered or were skipped as undefined, and a ``signature`` of every
setting needed to reproduce it. ``to_frame()`` gives a pandas DataFrame, ``to_dict()`` plain JSON types.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..serialization import EXCLUDED, INTERVAL, ResultMixin, plain
from ..signature import Signature


@dataclass(frozen=True)
class CorrelationResult(ResultMixin):
    """Correlation between a metric and a human score at one level, with an optional interval.

    Attributes
    ----------
    metric, human : str
        The scorers correlated.
    level : str
        'system', 'summary', 'global' or 'by-system'.
    coefficient : str
        Canonical coefficient name (e.g. 'kendall-b').
    statistic : float
        The correlation (NaN when undefined).
    ci : tuple of float or None
        ``(low, high)`` interval, None when no interval was asked for.
    confidence_level : float or None
        Coverage of ``ci``.
    pvalue : float or None
        Not computed for a plain correlation (None).
    n_used, n_skipped : int
        Groups that entered the statistic, and groups skipped because their correlation was undefined
        (inputs at summary level, systems at by-system level; systems at system level; cells at global).
    interval_method : str or None
        'boot-systems', 'boot-inputs', 'boot-both' (percentile or bca), 'fisher', or None.
    n_resamples, n_resamples_dropped : int or None
        Resamples drawn, and those dropped because the statistic was undefined on them.
    signature : Signature
        Settings that reproduce the result.
    bootstrap_distribution : numpy.ndarray or None
        The resampled statistics (undefined ones removed), for plots; not in ``to_dict``.
    """

    metric: str
    human: str
    level: str
    coefficient: str
    statistic: float
    ci: tuple[float, float] | None = field(metadata=INTERVAL)
    confidence_level: float | None
    pvalue: float | None
    n_used: int
    n_skipped: int
    interval_method: str | None
    n_resamples: int | None
    n_resamples_dropped: int | None
    signature: Signature
    bootstrap_distribution: np.ndarray | None = field(default=None, repr=False, compare=False, metadata=EXCLUDED)



@dataclass(frozen=True)
class ComparisonResult(ResultMixin):
    """Test of whether metric A correlates better with the human score than metric B.

    ``statistic`` is ``delta = r(A, human) - r(B, human)``; ``pvalue`` tests H1 given by
    ``alternative`` ('greater': A correlates more than B). ``null_distribution`` holds the resampled
    deltas (permutation or bootstrap; None for Williams).

    Both correlations use only the cells where A, B and the human are all present. ``n_used`` counts
    what the correlations rest on there (systems at system level, inputs at summary level, cells at
    global level; the smaller of the two for undefined groups), ``n_dropped_a`` the cells where A and the
    human are present but B is missing (left out of both correlations), ``n_dropped_b`` the converse.
    """

    metric_a: str
    metric_b: str
    human: str
    level: str
    coefficient: str
    test: str
    method: str | None
    alternative: str
    statistic: float
    statistic_a: float
    statistic_b: float
    pvalue: float
    ci: tuple[float, float] | None = field(metadata=INTERVAL)
    n_used: int
    n_skipped: int
    n_dropped_a: int
    n_dropped_b: int
    n_resamples: int | None
    n_resamples_dropped: int | None
    signature: Signature
    null_distribution: np.ndarray | None = field(default=None, repr=False, compare=False, metadata=EXCLUDED)



@dataclass(frozen=True)
class MetricComparisonResult(ResultMixin):
    """All-pairs comparison of several metrics against one human score.

    Attributes
    ----------
    metrics : tuple of str
        The metrics, in the order of the matrices' rows and columns.
    correlations : tuple of CorrelationResult
        Each metric's correlation with the human score (same order).
    deltas : numpy.ndarray
        ``deltas[a, b] = r(a) - r(b)``.
    pvalues : numpy.ndarray
        Raw p-values of H1 "row metric correlates better than column metric" (NaN on the diagonal).
    adjusted_pvalues : numpy.ndarray
        ``pvalues`` after ``correction`` over ``family``.
    significant : numpy.ndarray of bool
        ``adjusted_pvalues < alpha``.
    ranks : tuple of int
        Cluster rank of each metric (1 = best cluster), by mt-metrics-eval's rule (docs/statistics.md).
    rank_ranges : tuple of str
        The positions (in the order by correlation) that each metric's cluster spans, e.g. '1-3' for a
        cluster of the three best metrics, '4' for a cluster of one.
    warnings : tuple of str
        Lines the reader must see, e.g. that no comparison can be significant with these resamples
        and this correction (also raised as a :class:`~metaeval.SignificanceWarning`).
    """

    metrics: tuple[str, ...]
    human: str
    level: str
    coefficient: str
    test: str
    method: str | None
    alternative: str
    correction: str
    family: str
    alpha: float
    ranks: tuple[int, ...]
    rank_ranges: tuple[str, ...]
    correlations: tuple[CorrelationResult, ...]
    deltas: np.ndarray
    pvalues: np.ndarray
    adjusted_pvalues: np.ndarray
    significant: np.ndarray
    n_resamples: int | None
    signature: Signature
    warnings: tuple[str, ...] = ()

    @property
    def statistic(self) -> np.ndarray:
        """The correlations of the metrics, in order."""
        return np.array([c.statistic for c in self.correlations])

    @property
    def pvalue(self) -> np.ndarray:
        """Alias of ``adjusted_pvalues`` (the p-values a reader should use)."""
        return self.adjusted_pvalues

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per ordered metric pair (a, b), a != b."""
        return [
            {"metric_a": a, "metric_b": b, "delta": plain(self.deltas[i, j]), "pvalue": plain(self.pvalues[i, j]),
             "adjusted_pvalue": plain(self.adjusted_pvalues[i, j]), "significant": bool(self.significant[i, j])}
            for i, a in enumerate(self.metrics) for j, b in enumerate(self.metrics) if i != j
        ]

    def ranking_frame(self):
        """One row per metric: correlation, interval (if any), cluster rank and the positions it spans."""
        import pandas as pd

        return pd.DataFrame(
            [dict(c.to_dict(), rank=r, rank_range=span)
             for c, r, span in zip(self.correlations, self.ranks, self.rank_ranges)]
        )
