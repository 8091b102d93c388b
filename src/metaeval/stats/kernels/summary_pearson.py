"""Summary-level (item-grouped) Pearson of every metric pair under PERM-BOTH, compiled with numba.

The same computation as :class:`metaeval.stats.kernels.permutation.PearsonSummaryShared` (the numpy
path, which stays the fallback): per metric ``p`` and resample ``s`` the masked sums
``A_p[s, b] = sum_a m_sab (x, x^2, x z)_pab`` of every input ``b``; for a pair ``(i, j)`` the permuted sums
are ``base_i + A_j - A_i`` (``X'``) and ``base_j + A_i - A_j`` (``Y'``), and Pearson's r of input ``b`` is
``S_xz / sqrt(S_xx - S_x^2 / N)`` with the human column centred and normalised once. The compiled loop
fuses these steps, so no ``(P, k, M)`` temporaries are stored beyond one batch, and every sum runs in a
fixed order (systems, then inputs, ascending): the result does not depend on the batch size.

Used only when no two metric values of one input tie (then no permuted column is constant); numba is
imported and the loop compiled on first use, never on ``import metaeval``.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.permutation import pearson_terms

__all__ = ["PearsonSummaryCompiled"]

_COMPILED = {}


def _compiled():
    if "loop" in _COMPILED:
        return _COMPILED["loop"]
    import numba

    @numba.njit(cache=False, nogil=True, error_model="numpy")
    def accumulate(u0, u1, u2, a0, a1, a2, n, row):
        """row[j] += r(u + a_j), Pearson's r of the sums (x, x^2, x z) ``u + a_j``, clipped to [-1, 1]."""
        for j in range(row.shape[0]):
            s0 = u0 + a0[j]
            r = (u2 + a2[j]) / np.sqrt((u1 + a1[j]) - s0 * s0 / n)
            row[j] += min(1.0, max(-1.0, r))

    @numba.njit(cache=False, nogil=True, parallel=True, error_model="numpy")
    def loop(bits, lin, base, z_const, n, block):
        """bits (M, N, b) uint8, lin (M, N, 3, P), base (M, 3, P) -> T (b, P, P): T[s, i, j] = sum over the
        inputs of r(X') for the pair (i, j), X' = X_i + m (X_j - X_i); r(Y') of the pair is T[s, j, i]."""
        m, n_sys, b = bits.shape
        p = lin.shape[3]
        total = np.zeros((b, p, p))
        n_blocks = (b + block - 1) // block
        for blk in numba.prange(n_blocks):
            acc = np.empty((3, p))
            own = np.empty((3, p))
            for col in range(m):  # inputs in order: every (resample, pair) sum runs in a fixed order
                if z_const[col]:
                    continue  # r = 0 (the human column is 0) and the input is not counted
                for s in range(blk * block, min(b, (blk + 1) * block)):
                    acc[:, :] = 0.0
                    for a in range(n_sys):  # systems in order: the masked sums of every metric
                        if bits[col, a, s]:
                            for f in range(3):
                                for q in range(p):
                                    acc[f, q] += lin[col, a, f, q]
                    for f in range(3):
                        for q in range(p):
                            own[f, q] = base[col, f, q] - acc[f, q]
                    for i in range(p):
                        accumulate(own[0, i], own[1, i], own[2, i], acc[0], acc[1], acc[2], n, total[s, i])
        return total

    _COMPILED["loop"] = loop
    return loop


class PearsonSummaryCompiled:
    """Deltas of every pair from one compiled call per batch (complete data without metric ties)."""

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str, pairs):
        p, n, m = std.shape
        self.z_const, lin = pearson_terms(std, z)  # (P, N, M, 3)
        self.base = np.ascontiguousarray(lin.sum(axis=1).transpose(1, 2, 0))  # (M, 3, P)
        self.lin = np.ascontiguousarray(lin.transpose(2, 1, 3, 0))  # (M, N, 3, P)
        self.n = float(n)
        self.used = float(m if undefined == "zero" else m - int(self.z_const.sum()))
        self.pairs = list(pairs)
        self.index = {pair: q for q, pair in enumerate(self.pairs)}
        self.pi = np.array([i for i, _ in self.pairs], dtype=np.int64)
        self.pj = np.array([j for _, j in self.pairs], dtype=np.int64)
        self.cells = 2 * p * p  # per resample: the (P, P) sums of X' and of Y'; the batch is ~500 resamples

    def _deltas(self, cache: BatchCache) -> np.ndarray:
        def make():
            bits = cache.draws.cell_bits(cache.sl)  # (M, N, b)
            total = _compiled()(bits, self.lin, self.base, self.z_const, self.n, 8)
            with np.errstate(invalid="ignore", divide="ignore"):
                return total / self.used - total.transpose(0, 2, 1) / self.used

        return cache.get("summary-pearson-compiled", make)

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        return self._deltas(cache)[:, i, j]
