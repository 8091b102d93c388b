"""Exact weighted sums: fixed-point splits for BLAS products, byte tables for PERM-BOTH masks."""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.ranks import cached_index


class ExactWeightedSums:
    """``sum_j w[s, j] V[a, j]`` for non-negative integer weights ``w`` with ``sum_j w[s, j] <= max_total``.

    ``V`` (N, M) is split once into fixed-point parts ``V = P_1 + P_2 + ...``: ``P_r`` is a multiple of a
    power of two ``u_r`` with ``|P_r| <= 2^B u_r``, ``B = 53 - bitlength(max_total)``, so every product
    and partial sum of ``w P_r`` is an integer multiple of ``u_r`` below ``2^53 u_r``: exact in float64
    whatever the order. The weighted sums therefore come from one BLAS product and do not depend on the
    batch size or the BLAS; the parts are added from the smallest. Up to 4 parts are kept (values below
    ``2^-180 max |V|`` are dropped, a relative error far below rounding).
    """

    MAX_PARTS = 4

    def __init__(self, values: np.ndarray, max_total: int):
        values = np.asarray(values, dtype=np.float64)
        self.n = values.shape[0]
        bits = 53 - int(max_total).bit_length()
        vmax = float(np.abs(values).max()) if values.size else 0.0
        parts = []
        if vmax > 0:
            unit = np.ldexp(1.0, int(np.frexp(vmax)[1]) - bits)
            rest = values
            for _ in range(self.MAX_PARTS):
                part = np.round(rest / unit) * unit
                parts.append(part)
                rest = rest - part
                if not rest.any():
                    break
                unit = np.ldexp(unit, -bits)
        else:
            parts.append(np.zeros_like(values))
        self.n_parts = len(parts)
        self.rhs = np.ascontiguousarray(np.concatenate(parts, axis=0).T)  # (M, parts * N)

    def __call__(self, weights: np.ndarray) -> np.ndarray:
        """Weighted sums ``(b, N)`` for integer weights ``(b, M)``."""
        out = np.matmul(weights.astype(np.float64, copy=False), self.rhs).reshape(weights.shape[0], self.n_parts, self.n)
        total = out[:, -1]
        for r in range(self.n_parts - 2, -1, -1):
            total = out[:, r] + total
        return total


def byte_tables(coef: np.ndarray) -> np.ndarray:
    """``T[g, a, v] = sum_{t: bit t of v} coef[a, 8 g + t]`` for ``coef`` (N, M): float64 (ceil(M/8), N, 256).

    Each entry is summed in increasing bit order (a fixed order); cells beyond ``M`` count 0. The 256
    entries of one (group, system) are contiguous: a batch's lookups for one system stay in 2 KiB.
    """
    n, m = coef.shape
    g = -(-m // 8)
    padded = np.zeros((8 * g, n))
    padded[:m] = coef.T
    bits = padded.reshape(g, 8, n)
    table = np.empty((256, g, n))
    table[0] = 0.0
    for t in range(8):
        np.add(table[: 1 << t], bits[:, t], out=table[1 << t : 2 << t])
    return np.ascontiguousarray(table.transpose(1, 2, 0))


def table_sums(tables: np.ndarray, packed: np.ndarray) -> np.ndarray:
    """``sum_g T[g, a, packed[g, a, s]]`` -> (N, b) for PERM-BOTH bytes ``packed`` (G, N, b).

    The groups ``g`` are added in order (a fixed order per resample, whatever the batch).
    """
    g, n, _ = packed.shape
    offsets = cached_index(("table-offsets", n), lambda: np.arange(0, 256 * n, 256)[:, None])
    total = tables[0].reshape(-1).take(packed[0] + offsets)
    for i in range(1, g):
        total += tables[i].reshape(-1).take(packed[i] + offsets)
    return total
