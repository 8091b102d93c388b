"""The compiled loops of the mask tables: the pair counts of ``X'`` under every swap mask of a small group.

A group of ``n`` cells (an input's systems at summary level) has ``2^n`` swap masks. When its pooled values
fall in tie classes that every subset keeps (:mod:`metaeval.stats.kernels.kendall.mask_tables`), ``X'`` under mask
``m`` takes class ``cls[m_c, c]`` at cell ``c``, and its Kendall-family counts are integer functions of
those classes and the human's dense ranks. :func:`mask_table_counts` visits the masks in Gray-code order
(one bit flips per step) and updates ``S``, the tied pairs, the pairs tied in both and the distinct values in
O(n) per mask; :func:`mask_index` reads each resample's mask of each group from the swap bits. Compiled and
cached like every loop of ``stats/`` (:mod:`metaeval.stats.kernels.compiler.decorator`); imported on first use only.

References
----------
Gray, F. (1953). Pulse code communication. U.S. Patent 2,632,058 (the reflected binary code).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.compiler.decorator import jit
from metaeval.stats.kernels.compiler.intrinsics import next_task

__all__ = ["mask_index", "mask_table_counts"]


@jit()
def _sign(v):
    return (v > 0) - (v < 0)


def mask_table_counts(cls, zr, n_class):
    """``(S, Tx, Txz, distinct)`` of ``X'`` under every mask of every group, ``(4, G, 2^n)`` int64.

    ``cls`` (G, 2, n): the tie class of cell ``c``'s value of ``X_i`` (``cls[g, 0, c]``) and of ``X_j``
    (``cls[g, 1, c]``), ordered as the values, below ``n_class[g]``; ``zr`` (G, n) the human's dense ranks.
    Bit ``c`` of the mask set (a swap) makes ``X'_c`` the value of ``X_j``. ``S = sum_{c<d} sgn(a_c - a_d)
    sgn(z_c - z_d)`` over the classes ``a`` of ``X'``; ``Tx`` the pairs of one class, ``Txz`` those also tied
    in the human, ``distinct`` the classes present. Mask ``t ^ (t >> 1)`` follows ``t - 1``'s with bit
    ``ctz(t)`` flipped: the counts change by that cell's pairs only."""
    g_count, _, n = cls.shape
    out = np.empty((4, g_count, 1 << n), dtype=np.int64)
    width = max(1, int(n_class.max())) if g_count else 1
    parts.run_tasks(_mask_table_counts_of, g_count, cls, zr, width, out)
    return out


@jit()
def _mask_table_counts_of(counter, cls, zr, width, out):
    """The groups of :func:`mask_table_counts` taken in turn from ``counter``
    (:func:`~metaeval.stats.kernels.compiler.intrinsics.next_task`), each into its own row of ``out``. Serial
    (``nogil``)."""
    g_count, _, n = cls.shape
    size = 1 << n
    while True:
        g = next_task(counter)
        if g >= g_count:
            break
        a = cls[g, 0].copy()
        z = zr[g]
        zs = np.empty((n, n), dtype=np.int64)  # sgn(z_c - z_d)
        zt = np.empty((n, n), dtype=np.int64)  # 1 where z_c = z_d (c != d)
        for c in range(n):
            for d in range(n):
                zs[c, d] = _sign(z[c] - z[d])
                zt[c, d] = np.int64(z[c] == z[d]) if c != d else 0
        cnt = np.zeros(width, dtype=np.int64)
        s = 0
        tx = 0
        txz = 0
        distinct = 0
        for c in range(n):
            if cnt[a[c]] == 0:
                distinct += 1
            cnt[a[c]] += 1
            for d in range(c + 1, n):
                s += _sign(a[c] - a[d]) * zs[c, d]
                same = np.int64(a[c] == a[d])
                tx += same
                txz += same * zt[c, d]
        out[0, g, 0] = s
        out[1, g, 0] = tx
        out[2, g, 0] = txz
        out[3, g, 0] = distinct
        mask = 0
        for t in range(1, size):
            c = 0
            while (t >> c) & 1 == 0:
                c += 1
            mask ^= 1 << c
            new = cls[g, (mask >> c) & 1, c]
            old = a[c]
            if new != old:
                a[c] = new  # its own term below: sgn(0) - sgn(0) and (1 - 1), zt[c, c] = 0
                ds = 0
                dt = 0
                dtz = 0
                for d in range(n):
                    ad = a[d]
                    ds += zs[c, d] * (_sign(new - ad) - _sign(old - ad))
                    moved = np.int64(new == ad) - np.int64(old == ad)
                    dt += moved
                    dtz += moved * zt[c, d]
                s += ds
                tx += dt - 1  # d = c counted (new == new) - (old == new) = 1
                txz += dtz
                cnt[old] -= 1
                if cnt[old] == 0:
                    distinct -= 1
                if cnt[new] == 0:
                    distinct += 1
                cnt[new] += 1
            out[0, g, mask] = s
            out[1, g, mask] = tx
            out[2, g, mask] = txz
            out[3, g, mask] = distinct


def mask_index(bits, cells):
    """Each resample's mask of each group, ``(b, G)`` int64: bit ``c`` is the swap bit ``bits[s, cells[g, c]]``
    (``bits`` (b, C) uint8, ``cells`` (G, n) int64, ``n < 63``); the resamples split among the caller's threads."""
    b = bits.shape[0]
    out = np.empty((b, cells.shape[0]), dtype=np.int64)
    cuts = np.linspace(0, b, min(parts.threads(), max(b, 1)) + 1).astype(np.int64)
    parts.run_parts(_mask_index_rows, [(bits, cells, int(lo), int(hi), out) for lo, hi in zip(cuts[:-1], cuts[1:])
                                       if hi > lo])
    return out


@jit()
def _mask_index_rows(bits, cells, lo, hi, out):
    """Rows ``lo <= s < hi`` of :func:`mask_index`. Serial (``nogil``)."""
    g_count, n = cells.shape
    for s in range(lo, hi):
        for g in range(g_count):
            m = 0
            for c in range(n):
                m |= np.int64(bits[s, cells[g, c]]) << c
            out[s, g] = m
