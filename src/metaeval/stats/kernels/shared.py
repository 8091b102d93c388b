"""Permutation kernels shared by every metric pair of one all-pairs matrix (complete data).

Per-metric work (linear in the number of metrics ``P``) is done once per batch; each pair then combines
a few numbers per resample.

* **Global level, Pearson** (:class:`GlobalPearsonShared`). Under a swap mask ``m`` the permuted metric
  of pair ``(i, j)`` is ``X' = X_i + m (X_j - X_i)``, so ``sum X'``, ``sum X'^2`` and ``sum X' z`` are
  ``S_i + m.X_j - m.X_i`` with the per-metric masked sums ``m.X_p``, ``m.X_p^2``, ``m.(X_p z)``
  (``3 P`` numbers per resample, one exact BLAS product, :class:`ExactWeightedSums`); ``Y'`` takes the
  complementary cells: ``sum Y' = S_i + S_j - sum X'`` and likewise for the other sums.
* **Summary level, pair-count coefficients without ties** (:class:`SummaryPairsShared`). When no two
  metric values of one input tie (over all metrics), the permuted numerator ``S_b = sum_{a<c} t_ac
  sgn(X'_a - X'_c)`` of input ``b`` satisfies ``S_b(X') - S_b(Y') = D_b + sum_a m_ab G_ab`` with integer
  ``D`` and ``G`` (see the class), and every pair-count coefficient of an input is affine in ``S_b`` with
  constant coefficients (the metric has no ties, the human is not permuted): Kendall tau-a / b / c,
  accuracy, acc-eq and tau-eq. So ``delta_s`` of every pair is one exact integer matrix product per
  group of inputs with equal scale, then a fixed-order weighted sum over the groups.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.exact_sums import ExactWeightedSums
from metaeval.stats.ties import are_tied

__all__ = ["GlobalPearsonShared", "SummaryPairsShared"]


class GlobalPearsonShared:
    """Global-level Pearson of every pair from per-metric masked sums (PERM-BOTH, complete data)."""

    def __init__(self, std: np.ndarray, z: np.ndarray):
        p, n, m = std.shape
        self.p = p
        self.count = float(n * m)
        zc = (z - z.mean()).reshape(-1)
        self.zz = float(zc @ zc)
        x = std.reshape(p, -1)
        vals = np.concatenate([x, x * x, x * zc])  # (3P, NM)
        self.total = vals.sum(axis=1)
        self.sums_of = ExactWeightedSums(vals, n * m)
        self.cells = 3 * p + n * m // 8

    def _sums(self, cache: BatchCache) -> np.ndarray:
        def make():
            bits = cache.draws.mask(cache.sl)
            return self.sums_of(bits.reshape(bits.shape[0], -1))  # (b, 3P)

        return cache.get("global-pearson-sums", make)

    def _r(self, s1, s2, s3):
        vxx = s2 - s1 * s1 / self.count
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.clip(s3 / np.sqrt(vxx * self.zz), -1.0, 1.0)

    def evaluate(self, cache: BatchCache, i: int, j: int):
        s = self._sums(cache)
        p = self.p
        x = [self.total[i + f * p] + s[:, j + f * p] - s[:, i + f * p] for f in range(3)]
        y = [self.total[i + f * p] + self.total[j + f * p] - x[f] for f in range(3)]
        return self._r(*x), self._r(*y)


# name -> (scale, offset) of the coefficient of an input as an affine function of S, from its pair counts:
# P pairs, Tz pairs tied in the human, n systems, k distinct human values (the metric has no ties).
def _affine(coefficient: str, pairs: float, tz: np.ndarray, n: int, distinct_z: np.ndarray):
    untied = pairs - tz
    with np.errstate(invalid="ignore", divide="ignore"):
        if coefficient == "kendall-b":
            scale = 1.0 / np.sqrt(pairs * untied)
            return np.where(untied > 0, scale, np.nan), np.zeros_like(scale)
        if coefficient == "kendall-a":
            return np.where(untied > 0, 1.0 / pairs, np.nan), np.zeros(tz.shape)
        if coefficient == "kendall-c":
            mm = np.minimum(float(n), distinct_z)
            return np.where(untied > 0, 2.0 / (n * n * (mm - 1.0) / mm), np.nan), np.zeros(tz.shape)
        if coefficient == "accuracy":  # C / (C + D), C = (untied + S) / 2
            return np.where(untied > 0, 0.5 / untied, np.nan), np.where(untied > 0, 0.5, np.nan)
        if coefficient == "acc-eq":  # (C + Txy) / P with Txy = 0
            return np.full(tz.shape, 0.5 / pairs), untied / (2.0 * pairs)
        # tau-eq: (C - D - Tz) / P
        return np.full(tz.shape, 1.0 / pairs), -tz / pairs


COEFFICIENTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq")


def tie_free(std: np.ndarray) -> bool:
    """True when no two values of one input tie, over every system and metric of ``std`` (P, N, M)."""
    p, n, m = std.shape
    pooled = np.sort(std.transpose(2, 0, 1).reshape(m, p * n), axis=1)
    return not bool(are_tied(pooled[:, 1:], pooled[:, :-1]).any())


class SummaryPairsShared:
    """Summary-level pair-count coefficients of every metric pair without metric ties (PERM-BOTH).

    For input ``b`` and systems ``a != c`` let ``t_ac = sgn(z_a - z_c)`` (0 for a human tie),
    ``A = sgn(X_i a - X_i c)``, ``E = sgn(X_j a - X_j c)``, ``B = sgn(X_j a - X_i c)``,
    ``C = sgn(X_i a - X_j c)``. With ``f(m) = sum_{a<c} t_ac s(X'_a, X'_c)`` and ``Y' = X'`` under
    ``1 - m``, ``f(m) - f(1 - m) = sum_{a<c} t_ac [(1 - m_a - m_c)(A - E) + (m_a - m_c)(B - C)]``:
    ``D_b = sum_{a<c} t_ac (A - E)_ac`` and ``G_ab = sum_{c != a} t_ac ((B - C) - (A - E))_ac`` (``t``, ``A``,
    ``E`` are antisymmetric and ``(B - C)_ca = (B - C)_ac``, so both orders of a pair give the same term).
    Coefficient ``= scale_b S_b + offset_b``, so ``delta = sum_b w_b scale_b (D_b + m_b . G_b)`` over the
    defined inputs (``w_b = 1 / #defined``, or ``1 / M`` with ``undefined='zero'``). Inputs are grouped by
    ``scale_b``; within a group the integer products are exact in float32 (|G| <= 4 (N - 1) <= 127, at
    most ``N M`` terms, :meth:`applicable`), and the groups are added in a fixed order: results do not depend on the batch.
    """

    PAIR_CHUNK = 64

    @staticmethod
    def applicable(n: int, m: int) -> bool:
        """G fits int8 and every integer sum stays below 2^24 (exact in float32)."""
        return 4 * (n - 1) <= 127 and 4 * (n - 1) * n * m < 2**24

    def __init__(self, std: np.ndarray, z: np.ndarray, coefficient: str, undefined: str):
        p, n, m = std.shape
        self.p, self.n, self.m = p, n, m
        ia, ic = np.triu_indices(n, 1)
        zt = z.T  # (M, N)
        tz_sign = np.sign(zt[:, :, None] - zt[:, None, :]) * ~are_tied(zt[:, :, None], zt[:, None, :])
        t = tz_sign.astype(np.int8)  # (M, N, N)
        pairs = n * (n - 1) / 2.0
        tz = (t[:, ia, ic] == 0).sum(axis=1).astype(np.float64)
        srt = np.sort(zt, axis=1)
        distinct = 1.0 + (~are_tied(srt[:, 1:], srt[:, :-1])).sum(axis=1)
        scale, offset = _affine(coefficient, pairs, tz, n, distinct)
        defined = np.isfinite(scale)
        n_agg = int(defined.sum()) if undefined == "skip" else m
        self.nan = not defined.any() and undefined == "skip"
        self.weight = np.where(defined, scale, 0.0) / max(n_agg, 1)  # (M,) weight of S_b in the mean
        # affine offsets cancel in X' - Y'; the human's zero inputs add 0 - 0
        self.t = t  # (M, N, N)
        xt = np.ascontiguousarray(std.transpose(0, 2, 1))  # (P, M, N)
        self.xt = xt
        self.a_sign = [np.sign(xt[q][:, :, None] - xt[q][:, None, :]).astype(np.int8) for q in range(p)]
        self.t_upper = t * np.triu(np.ones((n, n), dtype=np.int8), 1)[None]
        # groups of inputs with one weight, in increasing order of weight (a fixed order)
        levels, inverse = np.unique(self.weight, return_inverse=True)
        self.groups = [(float(levels[g]), np.flatnonzero(inverse == g)) for g in range(levels.size)
                       if levels[g] != 0.0]
        self.cells = n * m // 4 + 8 * p
        self._g = {}

    def _pair_terms(self, i: int, j: int):
        """``(D (M,), G (M, N))`` of pair ``(i, j)`` as integers."""
        xi, xj = self.xt[i], self.xt[j]
        ae = self.a_sign[i] - self.a_sign[j]  # (M, N, N) int8 in [-2, 2]
        b = np.sign(xj[:, :, None] - xi[:, None, :]).astype(np.int8)  # sgn(X_j a - X_i c)
        c = -b.transpose(0, 2, 1)  # sgn(X_i a - X_j c) = -sgn(X_j c - X_i a)
        d = (self.t_upper * ae).sum(axis=(1, 2), dtype=np.int64)
        g = (self.t * ((b - c) - ae)).sum(axis=2, dtype=np.int32).astype(np.int8)  # |g| <= 4 (N - 1)
        return d, g

    def prepare(self, pairs):
        """Integer terms of the given pairs: per group of inputs, ``G`` as int8 ``(pairs, |g| N)``
        (``|G| <= 4 (N - 1)``), converted to float32 a chunk of pairs at a time in :meth:`_deltas`."""
        self.pairs = list(pairs)
        q = len(self.pairs)
        d_all = np.empty((self.m, q))
        self.rhs = [np.empty((q, cols.size * self.n), dtype=np.int8) for _, cols in self.groups]
        for k, (i, j) in enumerate(self.pairs):
            d, g = self._pair_terms(i, j)
            d_all[:, k] = d
            for rhs, (_, cols) in zip(self.rhs, self.groups):
                rhs[k] = g[cols].reshape(-1)
        self.const = np.zeros(q)
        for w, cols in self.groups:  # fixed order
            self.const = self.const + w * d_all[cols].sum(axis=0)
        self.index = {pair: k for k, pair in enumerate(self.pairs)}

    def _deltas(self, cache: BatchCache) -> np.ndarray:
        def make():
            bits = cache.draws.cell_bits(cache.sl)  # (M, N, b) uint8
            q = len(self.pairs)
            out = np.broadcast_to(self.const[:, None], (q, bits.shape[2])).copy()
            for (w, cols), rhs in zip(self.groups, self.rhs):
                block = bits[cols].reshape(-1, bits.shape[2]).astype(np.float32)
                for lo in range(0, q, self.PAIR_CHUNK):  # bounded float32 temporaries
                    part = rhs[lo:lo + self.PAIR_CHUNK].astype(np.float32) @ block
                    out[lo:lo + self.PAIR_CHUNK] += w * part.astype(np.float64)
            return out

        return cache.get("summary-pairs-deltas", make)

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        if self.nan:
            return np.full(len(range(*cache.sl.indices(cache.draws.n_resamples))), np.nan)
        return self._deltas(cache)[self.index[i, j]]
