"""Global-level (no grouping) pair-count coefficients under the bootstrap, in O(n log n) per resample.

A BOOT-BOTH resample draws system ``a`` ``w_a`` times and input ``b`` ``c_b`` times, so cell ``(a, b)``
appears ``W_ab = w_a c_b`` times. The pairs of the resampled vector that metaeval counts (copies of one
drawn system or input never form a pair, :func:`metaeval.stats.levels.level_correlation`) are, for two
distinct cells, ``w_a w_a' c_b c_b'`` pairs when ``a != a'`` and ``b != b'``, ``w_a c_b c_b'`` when ``a = a'``
(within one copy of the row) and ``w_a w_a' c_b`` when ``b = b'``. Any pair count ``K`` (pairs, concordant
minus discordant, ties in x, in z, in both) is therefore

    ``K = K_W(all cells) - sum_a (w_a^2 - w_a) K_c(row a) - sum_b (c_b^2 - c_b) K_w(column b)``,

where ``K_v(S)`` counts the pairs of the cells ``S`` each weighted by the product of the two cells' weights
``v``. Each ``K_v`` is a weighted Knight count: the cells are visited in the order of their metric ranks,
and a Fenwick tree over the human ranks holds the weights visited so far. Every count is an exact
integer, so the coefficients equal the reference path's (which materialises the resampled vectors).

The counting loop is compiled with numba when it is installed (``pip install metaeval[fast]``); numba is
imported, and the loop compiled, on the first call only, never on ``import metaeval``. Without numba the
factory returns None and the caller uses the reference path (pure numpy), which is the fallback.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314).
"""
from __future__ import annotations

import importlib.util

import numpy as np

from metaeval.stats.coefficients import _TieGroups, coefficient_from_counts
from metaeval.stats.kernels.batch import BatchCache

__all__ = ["COEFFICIENTS", "GlobalPairsBootstrap", "numba_available"]

COEFFICIENTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq")

_COMPILED = {}


def numba_available() -> bool:
    """Whether the compiled kernels can be used (numba importable); does not import it."""
    return importlib.util.find_spec("numba") is not None


def _compiled():
    """The numba-compiled resample loop (compiled on first use)."""
    if "loop" in _COMPILED:
        return _COMPILED["loop"]
    import numba

    njit = numba.njit(cache=False, nogil=True)

    @njit
    def weighted_counts(rx, rz, wt, tree, zsum, zsq, out):
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

    @numba.njit(cache=False, nogil=True)
    def subtract_copies(full, mult, other, index, rx, rz, tree, zsum, zsq, part, weights):
        """Remove from ``full`` the pairs between different copies of each unit of one axis: a unit drawn
        ``mult[u]`` times holds ``mult[u]^2 - mult[u]`` ordered copy pairs of its line's counts."""
        for u in range(mult.shape[0]):
            extra = mult[u] * mult[u] - mult[u]
            if extra > 0:
                for t in range(weights.shape[0]):
                    weights[t] = other[index[u, t]]
                part[:] = 0
                weighted_counts(rx[u], rz[u], weights, tree, zsum, zsq, part)
                for f in range(1, 6):
                    full[f] -= extra * part[f]

    @numba.njit(cache=False, nogil=True, parallel=True)
    def loop(gx, gz, ga, gb, rx_rows, rz_rows, b_rows, rx_cols, rz_cols, a_cols, nz, w, c):
        k = w.shape[0]
        n = w.shape[1]
        m = c.shape[1]
        res = np.zeros((k, 8), dtype=np.int64)
        for s in numba.prange(k):
            tree = np.zeros(nz + 1, dtype=np.int64)
            zsum = np.zeros(nz, dtype=np.int64)
            zsq = np.zeros(nz, dtype=np.int64)
            wt = np.empty(gx.shape[0], dtype=np.int64)
            for t in range(gx.shape[0]):
                wt[t] = w[s, ga[t]] * c[s, gb[t]]
            full = np.zeros(8, dtype=np.int64)
            weighted_counts(gx, gz, wt, tree, zsum, zsq, full)
            part = np.zeros(8, dtype=np.int64)
            subtract_copies(full, w[s], c[s], b_rows, rx_rows, rz_rows, tree, zsum, zsq, part,
                            np.empty(m, dtype=np.int64))
            subtract_copies(full, c[s], w[s], a_cols, rx_cols, rz_cols, tree, zsum, zsq, part,
                            np.empty(n, dtype=np.int64))
            res[s, 0] = full[0]
            for f in range(1, 6):
                res[s, f] = full[f] // 2
            res[s, 6] = full[6]
            res[s, 7] = full[7]
        return res

    _COMPILED["loop"] = loop
    return loop


class GlobalPairsBootstrap:
    """``r(X*, Z*)`` at global level for a pair-count coefficient, per bootstrap resample (complete data)."""

    def __init__(self, x: np.ndarray, z: np.ndarray, coefficient: str):
        n, m = x.shape
        nv = np.array([n * m])
        self.rx = _TieGroups(x.reshape(1, -1), nv).dense_ranks()[0].astype(np.int64)
        self.rz = _TieGroups(z.reshape(1, -1), nv).dense_ranks()[0].astype(np.int64)
        self.nz = int(self.rz.max()) + 1
        key = self.rx * self.nz + self.rz
        self.order = np.argsort(key, kind="stable").astype(np.int64)
        cells = np.arange(n * m).reshape(n, m)
        self.row_order = np.ascontiguousarray(
            np.take_along_axis(cells, np.argsort(key.reshape(n, m), axis=1, kind="stable"), axis=1))
        self.col_order = np.ascontiguousarray(
            np.take_along_axis(cells.T, np.argsort(key.reshape(n, m).T, axis=1, kind="stable"), axis=1))
        self.coefficient = coefficient
        self.cells = n + m + 8
        rx, rz = self.rx, self.rz
        self.args = (rx[self.order], rz[self.order], self.order // m, self.order % m,
                     np.ascontiguousarray(rx[self.row_order]), np.ascontiguousarray(rz[self.row_order]),
                     np.ascontiguousarray(self.row_order % m), np.ascontiguousarray(rx[self.col_order]),
                     np.ascontiguousarray(rz[self.col_order]), np.ascontiguousarray(self.col_order // m), self.nz)

    def counts(self, cache: BatchCache) -> np.ndarray:
        w = np.ascontiguousarray(cache.row_weights(), dtype=np.int64)
        c = np.ascontiguousarray(cache.col_weights(), dtype=np.int64)
        return _compiled()(*self.args, w, c)

    def evaluate(self, cache: BatchCache) -> np.ndarray:
        return self._coefficient(self.counts(cache))

    def from_weights(self, row_weights: np.ndarray, col_weights: np.ndarray) -> np.ndarray:
        """The coefficient for system multiplicities ``(k, N)`` and input multiplicities ``(k, M)``."""
        w = np.ascontiguousarray(row_weights, dtype=np.int64)
        c = np.ascontiguousarray(col_weights, dtype=np.int64)
        return self._coefficient(_compiled()(*self.args, w, c))

    def _coefficient(self, k: np.ndarray) -> np.ndarray:
        return coefficient_from_counts(self.coefficient, tuple(k[:, f] for f in range(8)))


def global_pairs_kernel(x, z, coefficient, draws, tie_threshold):
    """The compiled global-level kernel, or None (numba missing, threshold, other coefficient, not both)."""
    if coefficient not in COEFFICIENTS or tie_threshold or draws.method != "both" or not numba_available():
        return None
    if draws.cols_human is not None:
        return None
    return GlobalPairsBootstrap(x, z, coefficient)
