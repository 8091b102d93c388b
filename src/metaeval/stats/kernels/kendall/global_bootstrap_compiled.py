"""The compiled loops of :mod:`metaeval.stats.kernels.kendall.global_bootstrap`: the pair counts of a bootstrap
resample at the global level, O(n log n) per resample (a Fenwick tree over the human ranks).

Compiled with :func:`metaeval.stats.kernels.compiler.decorator.jit` (cached on disk); imported on first use only.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["boot_subtract_copies", "boot_weighted_counts", "global_bootstrap_counts"]


@jit()
def boot_weighted_counts(rx, rz, wt, tree, zsum, zsq, out):
    """Add to ``out`` n, the doubled counts (2P, 2S, 2Tx, 2Tz, 2Txz), distinct x and distinct z of the
    cells with metric ranks ``rx``, human ranks ``rz`` (sorted by (rx, rz)) and weights ``wt``;
    ``tree``, ``zsum``, ``zsq`` are zero on entry and on exit."""
    size = tree.shape[0]
    length = rx.shape[0]
    tot = 0
    sq = 0
    s = 0
    tx = 0
    txz = 0
    dx = 0
    i = 0
    while i < length:
        j = i
        gsum = 0
        gsq = 0
        while j < length and rx[j] == rx[i]:
            v = wt[j]
            if v > 0:
                r = rz[j] + 1  # 1-based rank in the tree
                below = 0  # weight visited with a smaller human rank
                k = r - 1
                while k > 0:
                    below += tree[k]
                    k -= k & (-k)
                upto = below + zsum[r - 1]  # ... with a smaller or equal human rank
                s += v * (below - (tot - upto))
                gsum += v
                gsq += v * v
            j += 1
        if gsum > 0:
            dx += 1
        tx += gsum * gsum - gsq
        # joint groups: runs of equal rz within the x group
        t = i
        while t < j:
            u = t
            jsum = 0
            jsq = 0
            while u < j and rz[u] == rz[t]:
                v = wt[u]
                jsum += v
                jsq += v * v
                u += 1
            txz += jsum * jsum - jsq
            t = u
        for t in range(i, j):
            v = wt[t]
            if v > 0:
                k = rz[t] + 1
                while k < size:
                    tree[k] += v
                    k += k & (-k)
                tot += v
                sq += v * v
                zsum[rz[t]] += v
                zsq[rz[t]] += v * v
        i = j
    tz = 0
    dz = 0
    for t in range(length):  # human ties, then reset the work arrays
        v = wt[t]
        if v > 0:
            r = rz[t]
            if zsum[r] > 0:
                tz += zsum[r] * zsum[r] - zsq[r]
                dz += 1
                zsum[r] = 0
                zsq[r] = 0
            k = r + 1
            while k < size:
                tree[k] -= v
                k += k & (-k)
    out[0] += tot
    out[1] += tot * tot - sq
    out[2] += 2 * s
    out[3] += tx
    out[4] += tz
    out[5] += txz
    out[6] += dx
    out[7] += dz


@jit()
def boot_subtract_copies(full, mult, other, index, rx, rz, tree, zsum, zsq, part, weights):
    """Remove from ``full`` the pairs between different copies of each unit of one axis: a unit drawn
    ``mult[u]`` times holds ``mult[u]^2 - mult[u]`` ordered copy pairs of its line's counts."""
    for u in range(mult.shape[0]):
        extra = mult[u] * mult[u] - mult[u]
        if extra > 0:
            for t in range(weights.shape[0]):
                weights[t] = other[index[u, t]]
            part[:] = 0
            boot_weighted_counts(rx[u], rz[u], weights, tree, zsum, zsq, part)
            for f in range(1, 6):
                full[f] -= extra * part[f]


@jit()
def global_bootstrap_counts(cells, rows, cols, nz, w, c, res):
    """The pair counts of every resample (``w`` row and ``c`` column multiplicities, ``(k, N)`` and ``(k, M)``),
    written to ``res`` (k, 8) int64: ``cells`` the sorted cells' ranks and axes, ``rows`` / ``cols`` each row's /
    column's cells (for the copies of one drawn unit). Serial (``nogil``): the caller splits the resamples among its
    threads (integer counts; a parallel loop took about as long again to compile)."""
    gx, gz, ga, gb = cells
    rx_rows, rz_rows, b_rows = rows
    rx_cols, rz_cols, a_cols = cols
    k = w.shape[0]
    n = w.shape[1]
    m = c.shape[1]
    for s in range(k):
        tree = np.zeros(nz + 1, dtype=np.int64)
        zsum = np.zeros(nz, dtype=np.int64)
        zsq = np.zeros(nz, dtype=np.int64)
        wt = np.empty(gx.shape[0], dtype=np.int64)
        for t in range(gx.shape[0]):
            wt[t] = w[s, ga[t]] * c[s, gb[t]]
        full = np.zeros(8, dtype=np.int64)
        boot_weighted_counts(gx, gz, wt, tree, zsum, zsq, full)
        part = np.zeros(8, dtype=np.int64)
        boot_subtract_copies(full, w[s], c[s], b_rows, rx_rows, rz_rows, tree, zsum, zsq, part,
                        np.empty(m, dtype=np.int64))
        boot_subtract_copies(full, c[s], w[s], a_cols, rx_cols, rz_cols, tree, zsum, zsq, part,
                        np.empty(n, dtype=np.int64))
        res[s, 0] = full[0]
        for f in range(1, 6):
            res[s, f] = full[f] // 2
        res[s, 6] = full[6]
        res[s, 7] = full[7]
