"""System level, every coefficient, every permutation method: the permuted system means of every metric pair."""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.exact_sums import ExactWeightedSums, byte_tables, table_sums
from metaeval.stats.kernels.ranks import fixed_pair_signs
from metaeval.stats.kernels.rows import PAIRWISE_SYSTEMS_MAX, fixed_pearson, system_correlation

__all__ = ["SharedSystemMeans"]


class SharedSystemMeans:
    """Permuted system means of every metric pair from per-metric masked sums (complete data).

    ``shift_p = (1/M) sum_b m_ab X_p[a, b]`` is computed once per metric and batch (byte tables for
    PERM-BOTH, exact weighted sums for PERM-INPUTS); then ``X'_a = xbar_i + shift_j - shift_i`` and
    ``Y' = xbar_i + xbar_j - X'``. A pair kernel (:class:`metaeval.stats.kernels.routes.PairKernel`) of every
    pair: ``deltas(cache, i, j) = r(X', zbar) - r(Y', zbar)`` with :func:`system_correlation`.
    """

    def __init__(self, std, z, draws, rtol=TIE_RTOL, *, coefficient: str = "kendall-b", tie_threshold: float = 0.0):
        self.p, self.n, self.m = std.shape
        self.cells = (self.p + 24) * self.n + self.n * (self.n - 1) // 4
        self.means = std.mean(axis=2)  # (P, N)
        self.zbar = z.mean(axis=1)
        self.z_signs = fixed_pair_signs(self.zbar, rtol=rtol) if self.n <= PAIRWISE_SYSTEMS_MAX else None
        self.z_fixed = fixed_pearson(self.zbar) if self.n >= 2 else None
        self.method = draws.method
        self.coefficient, self.tie_threshold, self.rtol = coefficient, tie_threshold, rtol
        if draws.method == "both":
            self.tables = [byte_tables(std[i]) for i in range(self.p)]
        elif draws.method == "inputs":
            self.sums = ExactWeightedSums(std.reshape(-1, self.m), self.m)

    def _shifts(self, cache):
        def make():
            if self.method == "both":
                packed = cache.packed()
                return np.stack([table_sums(t, packed).T for t in self.tables]) / self.m
            sums = self.sums(cache.draws.bits[cache.sl])  # (b, P * N)
            return sums.reshape(sums.shape[0], self.p, self.n).transpose(1, 0, 2) / self.m

        return cache.get("system-shifts", make)

    def permuted_means(self, cache, i, j):
        if self.method == "systems":
            xp = np.where(cache.draws.bits[cache.sl], self.means[j], self.means[i])
        else:
            shift = self._shifts(cache)
            xp = self.means[i] + (shift[j] - shift[i])
        return xp, self.means[i] + self.means[j] - xp

    def covers(self, i: int, j: int) -> bool:
        """Every pair."""
        return True

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        xp, yp = self.permuted_means(cache, i, j)
        args = (self.zbar, self.coefficient, self.tie_threshold, self.z_signs, self.z_fixed)
        return system_correlation(xp, *args, rtol=self.rtol) - system_correlation(yp, *args, rtol=self.rtol)
