"""The bootstrap side of a Bradley-Terry ranking (arrays in, arrays out): which resamples diverge and which
systems run off to +-inf there, the places of systems with equal scores, and percentile intervals of scores
and ranks with rank probabilities.

Systems with equal scores share their places: ``1 + #{larger}`` to ``#{larger or equal}``, so a rank
interval runs from the lower percentile of the first place to the upper percentile of the last.
"""
from __future__ import annotations

import numpy as np

from .bradley_terry import diverging

__all__ = ["diverging_resamples", "percentile_intervals", "rank_chunk", "ranks", "unbounded_sides"]


def unbounded_sides(counts, i, j, n, model):
    """Systems whose score runs off to +inf (a group that never loses to the others of its connected part) and
    to -inf (a group that never wins) in one diverging count array (P, 3): two boolean arrays (n,)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    link = model != "drop"
    fwd = (counts[:, 0] > 0) | (link & (counts[:, 2] > 0))  # i earned weight against j
    bwd = (counts[:, 1] > 0) | (link & (counts[:, 2] > 0))
    rows = np.concatenate([i[fwd], j[bwd]])
    cols = np.concatenate([j[fwd], i[bwd]])
    _, labels = connected_components(csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)), directed=True,
                                     connection="strong")
    used = counts.sum(axis=1) > 0 if link else counts[:, 0] + counts[:, 1] > 0
    a, b = labels[i[used]], labels[j[used]]
    between = a != b  # pairs across strong components: who beat whom
    src_a = np.where(fwd[used], a, -1)[between]  # component that earned weight across
    src_b = np.where(bwd[used], b, -1)[between]
    lost = set(np.concatenate([np.where(bwd[used], a, -1)[between], np.where(fwd[used], b, -1)[between]]).tolist())
    won = set(np.concatenate([src_a, src_b]).tolist())
    touched = set(a[between].tolist()) | set(b[between].tolist())
    top = np.array([lab in touched and lab not in lost for lab in labels])
    bottom = np.array([lab in touched and lab not in won for lab in labels])
    return top, bottom


def diverging_resamples(draws, observed, i, j, n, model):
    """:func:`~metaeval.stats.frameworks.bradley_terry.diverging` per resample, skipping the graph search where every pair compared in
    the data is compared in the resample with weight both ways (then the resample is as connected as the data)."""
    link = model != "drop"
    both = ((draws[..., 0] > 0) | (link & (draws[..., 2] > 0))) & ((draws[..., 1] > 0) | (link & (draws[..., 2] > 0)))
    needed = observed.sum(axis=1) > 0
    safe = np.all(both | ~needed, axis=1)
    out = np.zeros(draws.shape[0], dtype=bool)
    if model == "davidson":  # without a tie nu runs off to 0, without a win to infinity
        out |= (draws[..., 2].sum(axis=-1) == 0) | (draws[..., :2].sum(axis=(-1, -2)) == 0)
        safe &= ~out
    check = np.flatnonzero(~safe & ~out)
    if check.size:
        out[check] = diverging(draws[check], i, j, n, model)
        # a resample that dropped all comparisons of a pair may also disconnect the data's component
        empty = draws[check].sum(axis=-1) > 0
        for k, b in enumerate(check):
            from scipy.sparse import csr_matrix
            from scipy.sparse.csgraph import connected_components

            e = empty[k]
            graph = csr_matrix((np.ones(e.sum()), (i[e], j[e])), shape=(n, n))
            if connected_components(graph, directed=False)[0] > 1:
                out[b] = True
    return out


def ranks(scores: np.ndarray, component: np.ndarray, last: bool = False) -> np.ndarray:
    """Rank (1 = best) of every system within its component, per row of ``scores`` (B, n): the first place
    of its group of equal scores (``1 + #{larger}``), or with ``last`` the last (``#{larger or equal}``)."""
    same = component[:, None] == component[None, :]
    if last:
        beaten = scores[:, None, :] >= scores[:, :, None]  # [b, k, l]: l at least as good as k
        return np.sum(beaten & same[None], axis=2)
    greater = scores[:, None, :] > scores[:, :, None]  # [b, k, l]: l beats k
    return 1 + np.sum(greater & same[None], axis=2)


def rank_chunk(n: int) -> int:
    """Resamples ranked at once, so that the (chunk, n, n) comparison arrays stay near 16 MB."""
    return max(1, min(256, (1 << 24) // max(1, n * n)))


def percentile_intervals(scores, good, component, confidence_level):
    """Percentile intervals of the scores and ranks from the usable resamples ``good`` (B', n), and the rank
    probabilities; with fewer than 2, NaN scores, the point's rank places and NaN probabilities."""
    n = scores.size
    tail = (1.0 - confidence_level) / 2.0
    point_low = ranks(scores[None], component)[0]
    point_high = ranks(scores[None], component, last=True)[0]
    if good.shape[0] < 2:
        nan = np.full(n, np.nan)
        return nan, nan.copy(), point_low, point_high, np.full((n, n), np.nan)
    low = np.quantile(good, tail, axis=0)
    high = np.quantile(good, 1.0 - tail, axis=0)
    chunk = rank_chunk(n)
    first = np.concatenate([ranks(good[k:k + chunk], component) for k in range(0, good.shape[0], chunk)])
    last = np.concatenate([ranks(good[k:k + chunk], component, last=True) for k in range(0, good.shape[0], chunk)])
    rank_low = np.quantile(first, tail, axis=0, method="lower").astype(int)
    rank_high = np.quantile(last, 1.0 - tail, axis=0, method="higher").astype(int)
    probs = np.zeros((n, n))
    for k in range(n):
        probs[k] = np.bincount(first[:, k] - 1, minlength=n)[:n] / good.shape[0]
    return low, high, rank_low, rank_high, probs
