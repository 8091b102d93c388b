"""Ranking metrics into significance clusters.

Metrics are sorted by their correlation with the humans, best first (ties keep the input order). Walking
down the list, each metric joins the current cluster unless some metric of that cluster, or of a better
cluster, significantly beats it (``pvalues[better, metric] < alpha``, where ``pvalues[i, j]`` is the p-value
of ``H1: rho_i > rho_j``); in that case it opens a new cluster. A metric's rank is ``1 + the number of
clusters above it``, so metrics that cannot be told apart share a rank (as in the WMT metrics task and
Deutsch, Dror & Roth 2021). Metrics whose statistic is undefined (NaN) are ranked after all others, in
one last cluster.
"""
from __future__ import annotations

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError, check_probability

__all__ = ["significance_clusters"]


def significance_clusters(statistics, pvalues, *, alpha: float = defaults.ALPHA) -> np.ndarray:
    """Significance-cluster rank of every metric.

    Parameters
    ----------
    statistics : array_like, shape (P,)
        Each metric's correlation with the humans (higher is better).
    pvalues : array_like, shape (P, P)
        ``pvalues[i, j]``: p-value of ``H1: rho_i > rho_j`` (corrected if wanted); NaN = not significant.
    alpha : float in (0, 1)
        Significance level.

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
    seen: list[int] = []  # metrics of the current and better clusters
    for idx in order:
        if not seen:
            cluster = 1
        elif significant[seen, idx].any():
            cluster += 1
        ranks[idx] = cluster
        seen.append(int(idx))
    ranks[~np.isfinite(stats)] = cluster + 1
    return ranks
