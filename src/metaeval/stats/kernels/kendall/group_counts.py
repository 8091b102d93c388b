"""The tied groups of a metric pair counted one resample at a time, for every pair-count coefficient and Spearman.

:class:`metaeval.stats.kernels.kendall.group_pairs.GroupPairsCompiled` counts the groups where a pair's metrics
tie per resample (their denominators depend on the swap mask). :func:`tied_group_counts` gives ``S``, the tied
pairs, the pairs tied in the human too, the distinct values and Spearman's sums of ``X'`` and ``Y'`` of each
group: an ordered pass with a Fenwick tree over the human ranks (:func:`_group_counts`), or contingency tables
for graded scores (:func:`_table_counts`). Kendall tau-b has its own vectorised sweep
(:mod:`metaeval.stats.kernels.kendall.tied_counts`), which the tests hold equal to this pass. Compiled and cached
by :mod:`metaeval.stats.kernels.compiler.decorator`; imported on first use only.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.compiler.decorator import jit
from metaeval.stats.kernels.compiler.intrinsics import next_task

__all__ = ["tied_group_counts"]


@jit()
def _flush(t, nm, members, zr, n, spearman, tree, cnt, zcount, state):
    """Close the open tie group of stream ``t`` (its ``nm`` cells in ``members[t]``): its concordance with the
    lower groups (one Fenwick query per distinct human rank of the group, weighted by the rank's count), its
    tied pairs, and its cells added to the tree (Kendall family); its ranks (Spearman)."""
    inserted = state[t, 6]
    state[t, 1] += nm * (nm - 1) // 2
    state[t, 3] += 1
    if spearman:
        d = 2 * inserted + nm + 1 - (n + 1)
        state[t, 4] += d * state[t, 7]
        state[t, 5] += nm * d * d
        state[t, 7] = 0
    else:
        size = tree.shape[1]
        for u in range(nm):
            zcount[zr[members[t, u]]] += 1
        for u in range(nm):  # against the lower groups only: the tree does not hold this group yet
            r = zr[members[t, u]]
            h = zcount[r]
            if h <= 0:
                continue  # rank already counted (marked negative)
            below = 0  # cells of lower tie groups with a smaller human rank
            k = r
            while k > 0:
                below += tree[t, k]
                k -= k & (-k)
            # concordant - discordant with the lower groups: below - (inserted - below - equal), per cell
            state[t, 0] += h * (2 * below + cnt[t, r] - inserted)
            state[t, 2] += h * (h - 1) // 2
            zcount[r] = -h
        for u in range(nm):  # then the group joins the tree
            r = zr[members[t, u]]
            h = -zcount[r]
            if h <= 0:
                continue
            cnt[t, r] += h
            k = r + 1
            while k < size:
                tree[t, k] += h
                k += k & (-k)
            zcount[r] = 0
    state[t, 6] = inserted + nm


@jit()
def _group_counts(mval, mcell, msrc, lb, zr, ukey, rtol, spearman, tree, cnt, zcount, members, state):
    """Counts of ``X'`` (stream 0) and ``Y'`` (stream 1) of one group in one pass over the pair's pooled
    values sorted ascending (``mval``; cell ``mcell``, 0 for a value of ``X_i`` and 1 of ``X_j`` in ``msrc``):
    a value goes to stream ``lb[cell] ^ src`` (``lb`` the swap bits), so each stream is visited in ascending
    order without sorting. Tie groups are the runs of a stream's sorted neighbours tied under
    ``|a - b| <= rtol max(|a|, |b|)``, as in the generic path. ``state[t]`` receives ``(S, Tx, Txz, distinct,
    Spearman numerator, Spearman sum of squares, ...)``; Kendall's ``S`` comes from a Fenwick tree over the
    human dense ranks ``zr`` holding the cells of the lower tie groups (Knight 1966); Spearman's sums use the
    doubled centred ranks ``2 R - n - 1`` and ``ukey`` = ``2 Q - n - 1`` of the human."""
    n = lb.shape[0]
    state[:, :] = 0
    open_count = np.zeros(2, dtype=np.int64)
    prev = np.zeros(2)
    for e in range(mval.shape[0]):
        c = mcell[e]
        t = lb[c] ^ msrc[e]
        v = mval[e]
        nm = open_count[t]
        if nm > 0:
            if rtol == 0.0:
                close = v != prev[t]
            else:
                close = abs(v - prev[t]) > rtol * max(abs(v), abs(prev[t]))
            if close:
                _flush(t, nm, members, zr, n, spearman, tree, cnt, zcount, state)
                nm = 0
        if spearman:
            state[t, 7] += ukey[c]
        members[t, nm] = c
        open_count[t] = nm + 1
        prev[t] = v
    for t in range(2):
        if open_count[t] > 0:
            _flush(t, open_count[t], members, zr, n, spearman, tree, cnt, zcount, state)
    if not spearman:
        tree[:, :] = 0
        cnt[:, :] = 0


@jit()
def _table_counts(cx, cy, lb, zr, ukr, n_class, spearman, table, cnt, state):
    """:func:`_group_counts` for a group whose pooled values fall in ``n_class`` tie groups, each tied within
    (``cx`` / ``cy`` the group of each cell's value of ``X_i`` / ``X_j``, ascending): each stream's
    contingency table of tie group x human rank is filled in O(n), then read in O(n_class x distinct human
    values), without visiting the cells in order. ``ukr`` is Spearman's ``U`` of each human rank."""
    n = lb.shape[0]
    nz = cnt.shape[1]
    state[:, :] = 0
    table[:, :n_class, :] = 0
    cnt[:, :] = 0
    for c in range(n):
        t = lb[c]  # X_i's value goes to stream lb (X' keeps it where not swapped), X_j's to the other
        table[t, cx[c], zr[c]] += 1
        table[1 - t, cy[c], zr[c]] += 1
    for t in range(2):
        inserted = 0
        for k in range(n_class):
            size = 0
            for r in range(nz):
                size += table[t, k, r]
            if size == 0:
                continue
            state[t, 1] += size * (size - 1) // 2
            state[t, 3] += 1
            if spearman:
                usum = 0
                for r in range(nz):
                    usum += table[t, k, r] * ukr[r]
                d = 2 * inserted + size + 1 - (n + 1)
                state[t, 4] += d * usum
                state[t, 5] += size * d * d
            else:
                below = 0
                for r in range(nz):
                    h = table[t, k, r]
                    if h > 0:
                        state[t, 0] += h * (2 * below + cnt[t, r] - inserted)
                        state[t, 2] += h * (h - 1) // 2
                        cnt[t, r] += h
                    below += cnt[t, r] - h
            inserted += size
    cnt[:, :] = 0


def tied_group_counts(pooled, zr, ukey, nz, tables, bits, rtol, spearman):
    """Counts of ``X'`` and ``Y'`` of every group and resample, ``(b, G, 2, 6)`` int64: ``S``, ``Tx``, ``Txz``,
    distinct values, Spearman's numerator and sum of squares.

    ``mval``, ``mcell``, ``msrc`` (G, 2 n) the pair's pooled values of each group sorted ascending, their cell
    (0..n-1 within the group) and metric (0 or 1); ``cells`` (G, n) the flat index of each cell in ``bits``
    (b, C) uint8 (1 = swap); ``zr`` (G, n) the human dense ranks, ``ukey`` (G, n) Spearman's doubled centred
    human ranks, ``nz`` the largest number of distinct human values of a group. Groups with ``n_class[g] > 0``
    use the contingency tables (:func:`_table_counts`; ``classes[g]`` (2, n) the tie group of each cell's two
    values, ``ukr[g]`` ``U`` per human rank), the others the ordered pass (:func:`_group_counts`)."""
    b = bits.shape[0]
    out = np.zeros((b, pooled[3].shape[0], 2, 6), dtype=np.int64)
    parts.run_tasks(_group_counts_of, b, pooled, (zr, ukey, nz), tables, bits, (rtol, spearman), out)
    return out


@jit()
def _group_counts_of(counter, pooled, human, tables, bits, rule, out):
    """The resamples of :func:`tied_group_counts` taken in turn from ``counter``
    (:func:`~metaeval.stats.kernels.compiler.intrinsics.next_task`), each into its own row of ``out``. Serial
    (``nogil``)."""
    (mval, mcell, msrc, cells), (classes, n_class, ukr), (zr, ukey, nz), (rtol, spearman) = pooled, tables, human, rule
    g_count, n = cells.shape
    b = bits.shape[0]
    max_class = max(1, n_class.max())
    while True:
        s = next_task(counter)
        if s >= b:
            break
        tree = np.zeros((2, nz + 1), dtype=np.int64)
        cnt = np.zeros((2, nz), dtype=np.int64)
        zcount = np.zeros(nz, dtype=np.int64)
        members = np.empty((2, n), dtype=np.int64)
        table = np.zeros((2, max_class, nz), dtype=np.int64)
        state = np.zeros((2, 8), dtype=np.int64)
        lb = np.empty(n, dtype=np.uint8)
        for g in range(g_count):
            for c in range(n):
                lb[c] = bits[s, cells[g, c]]
            if n_class[g] > 0:
                _table_counts(classes[g, 0], classes[g, 1], lb, zr[g], ukr[g], n_class[g], spearman, table, cnt,
                              state)
            else:
                _group_counts(mval[g], mcell[g], msrc[g], lb, zr[g], ukey[g], rtol, spearman, tree, cnt, zcount,
                              members, state)
            for t in range(2):
                for f in range(6):
                    out[s, g, t, f] = state[t, f]
