"""Summary-level (item-grouped) Pearson of every metric pair under PERM-BOTH, compiled with numba.

The same computation as :class:`metaeval.stats.kernels.permutation.PearsonSummaryShared` (the numpy
path, which stays the fallback): per metric ``p`` and resample ``s`` the masked sums
``A_p[s, b] = sum_a m_sab (x, x^2, x z)_pab`` of every input ``b``; for a pair ``(i, j)`` the permuted sums
are ``base_i + A_j - A_i`` (``X'``) and ``base_j + A_i - A_j`` (``Y'``), and Pearson's r of input ``b`` is
``S_xz / sqrt(S_xx - S_x^2 / N)`` with the human column centred and normalised once. The compiled loop
(:func:`metaeval.stats.kernels.pearson.summary_pairs_compiled.summary_pearson_sums`) fuses these steps, so no ``(P, k, M)``
temporaries are stored beyond one batch, and every sum runs in a fixed order (systems, then inputs,
ascending): the result does not depend on the batch size.

Metric ties. Pearson does not depend on ranks, so ties matter only where they can make a permuted input
*constant* (then its r is undefined: skipped and not counted, or 0 with ``undefined='zero'``). That needs
every system of the input to hold, in ``X_i`` or in ``X_j``, a value tied with one common value: the pair's
*risky* inputs (:func:`metaeval.stats.kernels.permutation.risky_columns`, the rule of
the numpy path). The compiled loop skips the risky inputs of each pair, and :meth:`PearsonSummaryCompiled.deltas`
adds their r, and their count, per resample from the same sums in numpy, with the constancy test of the
reference path. So any metric, rounded or not, takes this path; only the risky inputs (typically none,
a few for zero-inflated metrics) cost per-pair numpy work.

numba is imported on first use, never on ``import metaeval``; the loop is compiled once per installation.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.permutation import pearson_terms, risky_columns
from metaeval.stats.correlations.ties import NOISE_RTOL, TIE_RTOL

__all__ = ["PearsonSummaryCompiled"]


class PearsonSummaryCompiled:
    """Deltas of every pair from one compiled call per batch (complete data, any metric ties)."""

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str, pairs, *, rtol: float = TIE_RTOL):
        p, n, m = std.shape
        self.z_const, lin = pearson_terms(std, z)  # (P, N, M, 3)
        self.base = np.ascontiguousarray(lin.sum(axis=1).transpose(1, 2, 0))  # (M, 3, P)
        self.lin = np.ascontiguousarray(lin.transpose(2, 1, 3, 0))  # (M, N, 3, P)
        self.n = float(n)
        self.m = m
        self.undefined = undefined
        self.used = float(m if undefined == "zero" else m - int(self.z_const.sum()))
        self.pairs = list(pairs)
        # the risky inputs of each pair (a mask could make X' or Y' constant): skipped by the compiled loop
        self.skip = np.zeros((m, p, p), dtype=np.uint8)
        self.risky: dict = {}
        for i, j in self.pairs:
            cols = np.flatnonzero(risky_columns(std[i], std[j], rtol) & ~self.z_const)
            if cols.size:
                self.risky[i, j] = (cols, np.ascontiguousarray(lin[i][:, cols]), np.ascontiguousarray(lin[j][:, cols]),
                                    std[i][:, cols], std[j][:, cols])
                self.skip[cols, i, j] = self.skip[cols, j, i] = 1
        self.any_skip = np.ascontiguousarray(self.skip.any(axis=2), dtype=np.uint8)
        self.cells = 2 * p * p  # per resample: the (P, P) sums of X' and of Y'; the batch is ~500 resamples

    def _totals(self, cache: BatchCache) -> np.ndarray:
        def make():
            from metaeval.stats.kernels.pearson.summary_pairs_compiled import summary_pearson_sums

            from metaeval.stats.kernels import parts

            bits = cache.draws.cell_bits(cache.sl)  # (M, N, b)
            b, p = bits.shape[2], self.lin.shape[3]
            total = np.zeros((b, p, p))
            blocks = (b + 7) // 8  # blocks of 8 resamples, split among the threads (each resample's sums in one)
            cuts = np.linspace(0, blocks, min(parts.threads(), max(blocks, 1)) + 1).astype(int)
            parts.run_parts(lambda lo, hi: summary_pearson_sums(bits, self.lin, self.base, self.z_const, self.skip,
                                                                self.any_skip, self.n, 8, lo, hi, total),
                            [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo])
            return total

        return cache.get("summary-pearson-compiled", make)

    def _risky_sums(self, cache: BatchCache, i: int, j: int):
        """Sum and number of the defined r over the risky inputs of pair ``(i, j)``, for ``X'`` and ``Y'``."""
        from metaeval.stats.kernels import parts
        from metaeval.stats.kernels.pearson.summary_pairs_compiled import risky_pearson_rows

        cols, li, lj, xi, xj = self.risky[i, j]
        mask = np.ascontiguousarray(cache.mask()[:, :, cols])  # (b, N, c)
        cuts = np.linspace(0, mask.shape[0], min(parts.threads(), max(mask.shape[0], 1)) + 1).astype(int)
        ranges = [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]  # resamples per thread
        out = []
        for keep, take, vk, vt in ((li, lj, xi, xj), (lj, li, xj, xi)):
            r = np.empty((mask.shape[0], cols.size))
            bad = np.empty((mask.shape[0], cols.size), dtype=np.bool_)
            # the numpy rule, compiled: r of the systems' sums in order; 0 where the permuted input is constant
            parts.run_parts(lambda lo, hi: risky_pearson_rows(mask[lo:hi], keep, take, vk, vt, self.n, NOISE_RTOL,
                                                              r[lo:hi], bad[lo:hi]), ranges)
            out.append((r.sum(axis=1), (~bad).sum(axis=1)))
        return out

    def covers(self, i: int, j: int) -> bool:
        """Every pair."""
        return True

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        total = self._totals(cache)
        sx, sy = total[:, i, j], total[:, j, i]
        if (i, j) not in self.risky:
            with np.errstate(invalid="ignore", divide="ignore"):
                return sx / self.used - sy / self.used
        (rx, nx), (ry, ny) = self._risky_sums(cache, i, j)
        n_risky = self.risky[i, j][0].size
        if self.undefined == "zero":
            cx = cy = np.full(sx.shape, self.used)
        else:
            cx, cy = self.used - n_risky + nx, self.used - n_risky + ny
        with np.errstate(invalid="ignore", divide="ignore"):
            return (np.where(cx > 0, (sx + rx) / np.maximum(cx, 1), np.nan)
                    - np.where(cy > 0, (sy + ry) / np.maximum(cy, 1), np.nan))
