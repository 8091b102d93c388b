"""Global-level (no grouping) pair-count coefficients under the bootstrap, in O(n log n) per resample.

A BOOT-BOTH resample draws system ``a`` ``w_a`` times and input ``b`` ``c_b`` times, so cell ``(a, b)``
appears ``W_ab = w_a c_b`` times. The pairs of the resampled vector that metaeval counts (copies of one
drawn system or input never form a pair, :func:`metaeval.stats.correlations.levels.level_correlation`) are, for two
distinct cells, ``w_a w_a' c_b c_b'`` pairs when ``a != a'`` and ``b != b'``, ``w_a c_b c_b'`` when ``a = a'``
(within one copy of the row) and ``w_a w_a' c_b`` when ``b = b'``. Any pair count ``K`` (pairs, concordant
minus discordant, ties in x, in z, in both) is therefore

    ``K = K_W(all cells) - sum_a (w_a^2 - w_a) K_c(row a) - sum_b (c_b^2 - c_b) K_w(column b)``,

where ``K_v(S)`` counts the pairs of the cells ``S`` each weighted by the product of the two cells' weights
``v``. Each ``K_v`` is a weighted Knight count: the cells are visited in the order of their metric ranks,
and a Fenwick tree over the human ranks holds the weights visited so far. Every count is an exact
integer, so the coefficients equal the reference path's (which materialises the resampled vectors).

The counting loop is compiled with numba when it is installed (``pip install metaeval[fast]``); numba is
imported on the first call only, never on ``import metaeval``, and the loop is compiled once per installation
(:mod:`metaeval.stats.kernels.kendall.global_bootstrap_compiled`). Without numba the
factory returns None and the caller uses the reference path (pure numpy), which is the fallback.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import TieGroups, coefficient_from_counts
from metaeval.stats.kernels import compiler
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["COEFFICIENTS", "GlobalPairsBootstrap", "global_pairs_kernel"]

COEFFICIENTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq")

def _compiled():
    """The compiled resample loop (:mod:`metaeval.stats.kernels.kendall.global_bootstrap_compiled`, imported on first
    use) as ``counts(cells, rows, cols, nz, w, c) -> (k, 8)``: the loop is serial, the resamples split among the
    threads (:func:`metaeval.stats.kernels.parts.run_parts`; each resample's counts in one, integers)."""
    from metaeval.stats.kernels import parts
    from metaeval.stats.kernels.kendall.global_bootstrap_compiled import global_bootstrap_counts

    def counts(cells, rows, cols, nz, w, c):
        k = w.shape[0]
        res = np.zeros((k, 8), dtype=np.int64)
        cuts = np.linspace(0, k, min(parts.threads(), max(k, 1)) + 1).astype(int)
        parts.run_parts(lambda lo, hi: global_bootstrap_counts(cells, rows, cols, nz, w[lo:hi], c[lo:hi], res[lo:hi]),
                        [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo])
        return res

    return counts


class GlobalPairsBootstrap:
    """``r(X*, Z*)`` at global level for a pair-count coefficient, per bootstrap resample (complete data)."""

    def __init__(self, x: np.ndarray, z: np.ndarray, coefficient: str, *, rtol: float = TIE_RTOL):
        n, m = x.shape
        nv = np.array([n * m])
        self.rx = TieGroups(x.reshape(1, -1), nv, rtol).dense_ranks()[0].astype(np.int64)
        self.rz = TieGroups(z.reshape(1, -1), nv, rtol).dense_ranks()[0].astype(np.int64)
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
        self.args = ((rx[self.order], rz[self.order], self.order // m, self.order % m),
                     (np.ascontiguousarray(rx[self.row_order]), np.ascontiguousarray(rz[self.row_order]),
                      np.ascontiguousarray(self.row_order % m)),
                     (np.ascontiguousarray(rx[self.col_order]), np.ascontiguousarray(rz[self.col_order]),
                      np.ascontiguousarray(self.col_order // m)), self.nz)

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


def global_pairs_kernel(x, z, coefficient, draws, tie_threshold, rtol=TIE_RTOL):
    """The compiled global-level kernel, or None (numba missing, threshold, other coefficient, not both)."""
    if coefficient not in COEFFICIENTS or tie_threshold or draws.method != "both" or not compiler.numba_available():
        return None
    if draws.cols_human is not None:
        return None
    return GlobalPairsBootstrap(x, z, coefficient, rtol=rtol)
