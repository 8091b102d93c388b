"""By-system (grouped by system) Pearson of every metric pair under PERM-BOTH, from per-metric row sums.

Under a swap mask ``m`` the permuted metric of pair ``(i, j)`` is ``X' = X_i + m (X_j - X_i)``, so the sums
of row (system) ``a`` that Pearson's r needs are linear in the metrics:

    ``sum_b X'_ab = S_i[a] + (m.X_j)[a] - (m.X_i)[a]``, likewise for ``X'^2`` and ``X' zc``,

with the per-metric masked row sums ``(m.X_p)[a] = sum_b m_ab X_p[a, b]`` (``3 P N`` numbers per resample,
one exact BLAS product per row, :class:`metaeval.stats.kernels.exact_sums.ExactWeightedSums`) and ``zc`` each
row's centred human scores. ``Y'`` takes the complementary cells (``S_i + S_j - X'`` sums). Row ``a``'s r is
``sum X' zc / sqrt((sum X'^2 - (sum X')^2 / M) sum zc^2)`` (:func:`metaeval.stats.correlations.coefficients.pearson_r`), and
the statistic is the mean over the rows in order, a row with a constant human left out (``undefined='skip'``)
or counted as 0 (``'zero'``). The metrics are centred per row by one constant common to all metrics, which
leaves every r unchanged. Used for the pairs whose two metrics have no tie within a row
(:func:`metaeval.stats.kernels.kendall.summary_pairs.tie_free_pairs`), so no permuted row is constant.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import pearson_r
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.exact_sums import ExactWeightedSums
from metaeval.stats.kernels.ranks import is_constant_along

__all__ = ["BySystemPearsonShared"]


class BySystemPearsonShared:
    """``r(X') - r(Y')`` at by-system level for the pairs ``covers`` accepts (PERM-BOTH, complete data)."""

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str, ok: np.ndarray):
        p, n, m = std.shape
        self.p, self.n, self.m = p, n, m
        self.ok = ok
        x = std - std.mean(axis=(0, 2))[None, :, None]  # one constant per row, common to all metrics
        zc = z - z.mean(axis=1, keepdims=True)
        self.z_const = is_constant_along(z, axis=1)  # (N,)
        self.root_zz = np.sqrt((zc * zc).sum(axis=1))
        vals = np.stack([x, x * x, x * zc[None]], axis=0)  # (3, P, N, M)
        self.total = vals.sum(axis=3)  # (3, P, N)
        self.sums_of = [ExactWeightedSums(vals[:, :, a].reshape(3 * p, m), m) for a in range(n)]
        used = n - int(self.z_const.sum()) if undefined == "skip" else n
        self.used = float(used) if used else np.nan
        self.cells = 3 * p * n + n * m // 8

    def covers(self, i: int, j: int) -> bool:
        return bool(self.ok[i, j])

    def _sums(self, cache: BatchCache) -> np.ndarray:
        def make():
            bits = cache.draws.cell_bits(cache.sl)  # (M, N, b)
            out = np.empty((3, self.p, self.n, bits.shape[2]))
            for a in range(self.n):
                row = np.ascontiguousarray(bits[:, a, :].T)  # (b, M)
                out[:, :, a] = self.sums_of[a](row).T.reshape(3, self.p, -1)
            return out  # (3, P, N, b)

        return cache.get("by-system-pearson-sums", make)

    def _mean_r(self, s0, s1, s2) -> np.ndarray:
        r = pearson_r(s2, s1 - s0 * s0 / self.m, self.root_zz[:, None])  # (N, b)
        total = np.zeros(r.shape[1])
        for a in range(self.n):  # rows in order
            if not self.z_const[a]:
                total = total + r[a]
        return total / self.used

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        s = self._sums(cache)
        x = [self.total[f, i][:, None] + s[f, j] - s[f, i] for f in range(3)]
        y = [self.total[f, i][:, None] + self.total[f, j][:, None] - x[f] for f in range(3)]
        return self._mean_r(*x) - self._mean_r(*y)
