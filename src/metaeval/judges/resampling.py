"""Bootstrap resamples of pairwise comparisons, as per-pair count arrays.

A ranking depends on the comparisons only through the counts per unordered system pair (wins of each
side, ties), so a resample is a count array ``(P, 3)``:

- ``'comparisons'``: n comparisons drawn with replacement from the n observed ones. The counts of such a
  resample are ``Multinomial(n, c / n)`` over the 3P cells (exactly, not an approximation), so a resample
  costs 3P binomial draws instead of n;
- ``'inputs'``: the inputs drawn with replacement, each bringing all its comparisons (a clustered
  bootstrap: the comparisons of one input move together). With multiplicities ``m_b`` of the inputs,
  ``counts_b = m_b @ C`` for the per-input count matrix C (sparse);
- ``'judges'``: the same with judges (annotators) as the clusters.

Several count sources (a judge's and the humans' comparisons) share one draw of inputs when they are
resampled together (:func:`cluster_weights` then :func:`cluster_counts` for each).

The draws themselves are arrays in, arrays out, in the stats engine
(:mod:`metaeval.stats.resampling.pair_counts`); this module turns comparisons into the matrices they act on,
and checks the sizes before any work. Batches are :func:`metaeval.stats.resampling.draws.batch_slices` of
:func:`batch_for`.
"""
from __future__ import annotations

import numpy as np

from ..errors import ParameterError
from ..vocabulary import JUDGE_RESAMPLING
from ..stats.resampling.pair_counts import (active_clusters, cluster_counts, cluster_types, cluster_weights,
                                            comparison_counts, type_weights)
from .comparisons import Comparisons

__all__ = ["BATCH", "MAX_SYSTEMS", "active_clusters", "batch_for", "check_memory", "check_systems", "cluster_codes",
           "cluster_counts", "cluster_matrix", "cluster_types", "cluster_weights", "comparison_counts", "type_weights"]

BATCH = 250
"""Resamples drawn and fitted at once (bounds memory: a batch holds BATCH x P x 3 counts)."""


def cluster_codes(comparisons: Comparisons, resampling: str) -> tuple[np.ndarray, int]:
    """The cluster of each comparison and the number of clusters for ``resampling``."""
    if resampling == "inputs":
        return comparisons.input, len(comparisons.inputs)
    if resampling == "judges":
        return comparisons.judge, len(comparisons.judges)
    raise ParameterError(f"`resampling` must be one of {', '.join(map(repr, JUDGE_RESAMPLING))}; got {resampling!r}.")


def cluster_matrix(comparisons: Comparisons, resampling: str):
    """Sparse (clusters x 3P) matrix of per-cluster pair counts."""
    from scipy.sparse import csr_matrix

    groups, n_groups = cluster_codes(comparisons, resampling)
    n = len(comparisons.systems)
    p = n * (n - 1) // 2
    _, _, outcome, _ = comparisons.oriented()
    cell = comparisons.pair_index() * 3 + outcome
    data = np.ones(cell.size)
    return csr_matrix((data, (groups, cell)), shape=(n_groups, 3 * p))


MAX_SYSTEMS = 5000
"""The most systems a Bradley-Terry ranking takes: each Newton step solves a dense n x n system (n^3 / 3
multiply-adds, 4e10 at 5000 systems) and the result holds n x n win rates and rank probabilities."""


def batch_for(n_systems: int, batch: int = BATCH) -> int:
    """Resamples fitted at once for ``n_systems``: at most ``batch``, and few enough that the batched n x n
    Hessians stay near 128 MB."""
    return max(1, min(batch, (1 << 27) // max(1, 16 * n_systems * n_systems)))


def check_systems(n_systems: int, *, param: str = "comparisons") -> None:
    """Refuse a ranking of more than :data:`MAX_SYSTEMS` systems, in one line."""
    if n_systems > MAX_SYSTEMS:
        raise ParameterError(f"`{param}` must compare at most {MAX_SYSTEMS} systems for a Bradley-Terry ranking (each"
                             f" Newton step solves a dense n x n system); got {n_systems} systems.")


def check_memory(n_resamples: int, n_systems: int, n_clusters: int, *, param: str = "n_resamples",
                 pairs: bool = True, available: int | None = None) -> None:
    """Refuse, before computing, a problem whose arrays cannot fit in the memory still available.

    A ranking (``pairs``) holds dense arrays over the ``n (n - 1) / 2`` system pairs (counts, win rates, rank
    probabilities, Hessians: about ``64 n^2`` bytes) and the resampled scores (``16 n`` bytes a resample);
    the agreement and the audit hold the input multiplicities of every resample (``8 m`` bytes a resample).
    """
    from .._validation import _size, available_memory

    available = available_memory() if available is None else available
    if available is None:
        return
    fixed = 64 * n_systems * n_systems if pairs else 0
    if fixed > available:
        raise ParameterError(f"`comparisons` must compare few enough systems for the pairwise arrays to fit in memory;"
                             f" got {n_systems} systems (at least {_size(fixed)}, {_size(available)} available).")
    needed = fixed + n_resamples * (16 * n_systems + 8 * n_clusters + 64)
    if needed > available:
        raise ParameterError(f"`{param}` must be small enough for the resamples to fit in memory; got {n_resamples}"
                             f" (at least {_size(needed)} for {n_systems} systems x {n_clusters} inputs,"
                             f" {_size(available)} available).")
