"""Ranking metrics into significance clusters (the rule of mt-metrics-eval).

Metrics are sorted by their correlation with the humans, best first (ties keep the input order). Walking
down the list, each metric joins the *current* cluster unless some metric of the current cluster
significantly beats it (``pvalues[member, metric] < alpha``, where ``pvalues[i, j]`` is the p-value of
``H1: rho_i > rho_j``); in that case it opens a new cluster, which becomes the current one. A metric beaten
only by a metric of an earlier (better) cluster does not open another cluster. A metric's rank is
``1 + the number of clusters above it``, so metrics that cannot be told apart share a rank. This is
``AssignRanks`` of mt-metrics-eval (Freitag et al., WMT metrics task), except that significance is
``p < alpha`` (strict, as everywhere in metaeval) where mt-metrics-eval uses ``p <= alpha``. Metrics whose
statistic is undefined (NaN) are ranked after all others, in one last cluster.

Worked example (p-values of "row beats column", alpha = 0.05; the metrics already sorted)::

          A     B     C     D
    A     -   0.30  0.01  0.02
    B   0.90    -   0.20  0.30
    C   0.90  0.90    -   0.40
    D   0.90  0.90  0.90    -

A opens cluster 1. B: A does not beat it (0.30), so B joins cluster 1. C: A beats it (0.01), so C opens
cluster 2 = {C}. D: the current cluster is {C} and C does not beat D (0.40), so D joins cluster 2 although A
beats it. Ranks 1, 1, 2, 2; as ranges, A and B are "1-2" and C and D "3-4". The older rule of metaeval
(a metric beaten by any metric of the current *or a better* cluster opens a new one) gave 1, 1, 2, 3: every
metric that the top metric beats got a rank of its own.
"""
from __future__ import annotations

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError, check_probability

__all__ = ["rank_ranges", "significance_clusters"]


def significance_clusters(statistics, pvalues, *, alpha: float = defaults.ALPHA) -> np.ndarray:
    """Significance-cluster rank of every metric (mt-metrics-eval's rule, see the module docstring).

    Parameters
    ----------
    statistics : array_like, shape (P,)
        Each metric's correlation with the humans (higher is better).
    pvalues : array_like, shape (P, P)
        ``pvalues[i, j]``: p-value of ``H1: rho_i > rho_j`` (corrected if wanted); NaN = not significant.
    alpha : float in (0, 1)
        Significance level: ``pvalues[i, j] < alpha`` means i significantly beats j.

    Returns
    -------
    ndarray of int, shape (P,)
        Rank of each metric, in the input order (1 = top cluster).

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[np.nan, 0.2, 0.01], [0.6, np.nan, 0.03], [0.99, 0.9, np.nan]])
    >>> significance_clusters([0.6, 0.5, 0.2], p, alpha=0.05).tolist()
    [1, 1, 2]
    """
    stats = np.asarray(statistics, dtype=np.float64)
    pv = np.asarray(pvalues, dtype=np.float64)
    if stats.ndim != 1:
        raise ParameterError(f"`statistics` must be a 1-dimensional array; got shape {stats.shape!r}.")
    p = stats.size
    if pv.shape != (p, p):
        raise ParameterError(f"`pvalues` must have shape {(p, p)!r}; got {pv.shape!r}.")
    alpha = check_probability("alpha", alpha)
    significant = np.nan_to_num(pv, nan=1.0) < alpha

    defined = np.flatnonzero(np.isfinite(stats))
    order = defined[np.argsort(-stats[defined], kind="stable")]
    ranks = np.zeros(p, dtype=np.int64)
    cluster = 0
    current: list[int] = []  # the metrics of the current cluster only
    for idx in order:
        if not current or significant[current, idx].any():
            cluster += 1
            current = []
        ranks[idx] = cluster
        current.append(int(idx))
    ranks[~np.isfinite(stats)] = cluster + 1
    return ranks


def rank_ranges(ranks) -> tuple[str, ...]:
    """The positions each metric's cluster spans in the sorted list, as text ("1-3", or "4" alone).

    Clusters are contiguous in the order by correlation, so cluster ``r`` spans positions
    ``1 + #{ranks < r}`` to ``#{ranks <= r}``.

    Parameters
    ----------
    ranks : array_like of int, shape (P,)
        Cluster ranks from :func:`significance_clusters`.

    Returns
    -------
    tuple of str
        One range per metric, in the input order.

    Examples
    --------
    >>> rank_ranges([1, 2, 1, 3, 2])
    ('1-2', '3-4', '1-2', '5', '3-4')
    """
    r = np.asarray(ranks, dtype=np.int64)
    if r.ndim != 1:
        raise ParameterError(f"`ranks` must be a 1-dimensional array; got shape {r.shape!r}.")
    out = []
    for value in r:
        first = 1 + int(np.sum(r < value))
        last = int(np.sum(r <= value))
        out.append(str(first) if first == last else f"{first}-{last}")
    return tuple(out)
