"""The block tables of summary-level Kendall tau-b under PERM-BOTH where a pair's metrics tie within an input: the
idea, the packing of the four counts, and the table indices every resample reads (the tables are built and read for
16 metric pairs side by side in :mod:`metaeval.stats.kernels.kendall.lanes_compiled`).

With a metric tie, ``tau_b(X'_b) - tau_b(Y'_b)`` of input ``b`` needs ``S(X')``, ``S(Y')`` and the tied pairs
``T(X')``, ``T(Y')`` per resample (the denominators depend on the mask), and ``S(X') + S(Y')`` is a quadratic
form in the mask. Each system pair ``(a, c)`` adds to the four counts a value that depends only on its two swap
bits: with ``X'_a = y_a`` if ``m_a`` else ``x_a`` (``Y'`` the other value) and ``t`` the human's signs,
``t_ac sgn(X'_a - X'_c)``, ``t_ac sgn(Y'_a - Y'_c)``, ``[X'_a = X'_c]`` and ``[Y'_a = Y'_c]``. The four counts are
packed into one integer (fields of ``shift`` bits: 8 for up to 16 systems, whose counts lie in ``[-120, 120]``, 16
beyond), so that a sum of contributions is one integer sum; the contribution of ``(a, c)`` is written
``alpha + beta m_a + gamma m_c + delta m_a m_c``.

The systems are split into ``B`` blocks of a few systems. For two blocks ``g < h`` a table holds, for each of the
``2^(s_g + s_h)`` values of their swap bits, the sum of the terms ``delta m_a m_c`` of the system pairs across
``g`` and ``h``, plus the *own* terms (``beta``, ``gamma`` and the pairs inside the block) of the blocks the table
is the owner of, and, in the first table, the constant. A table is built once per metric pair and input in about
one integer add per entry (``lanes_compiled._lane_fill``: rows added by doubling over the bits of ``h``, vectorised
over the bits of ``g``); a resample then sums ``B (B - 1) / 2`` entries, at indices that are the same for every
metric pair (:func:`block_indices`, once per batch), and unpacks its four counts: for 15 systems in blocks of
five, three table reads per input and resample in place of 105 sign evaluations.

Ties are exact here: a pair and input are counted only when every gap between two of its values that can meet in
one permuted vector is 0 (tied in every ``X'``) or above the tie tolerance of the pair's pooled values of that
input (tied in none: the tolerance of any ``X'``, ``max(rtol spread(X'), NOISE_RTOL max|X'|)``, is at most that
of the pooled values). A *near* tie, whose fate depends on the spread of each ``X'``, is flagged and left to the
caller. Compiled and cached like every loop of ``stats/`` (:mod:`metaeval.stats.kernels.compiler.decorator`); imported on first use.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["block_indices", "packing"]


@jit()
def block_indices(bits, block_first, block_size, table_first, table_second, table_offset, out):
    """``out[j, t, r]``: the entry of table ``t`` (blocks ``g = table_first[t] < h = table_second[t]``) that
    resample ``r`` reads at input ``j``: ``table_offset[t] + (bits of block h) << s_g + (bits of block g)``, the
    bits of a block (systems ``block_first[g]``, ... ``block_size[g]`` of them) least significant first.
    ``bits`` (M, N, k) uint8, 1 = swap. Serial: the caller splits the inputs among its threads."""
    m = bits.shape[0]
    k = bits.shape[2]
    n_blocks = block_first.size
    for j in range(m):
        vals = np.zeros((n_blocks, k), dtype=np.int64)
        for g in range(n_blocks):
            dst = vals[g]
            for u in range(block_size[g]):
                row = bits[j, block_first[g] + u]
                for r in range(k):
                    dst[r] |= np.int64(row[r]) << u
        for t in range(table_first.size):
            lo = vals[table_first[t]]
            hi = vals[table_second[t]]
            shift = block_size[table_first[t]]
            off = table_offset[t]
            dst = out[j, t]
            for r in range(k):
                dst[r] = off + (hi[r] << shift) + lo[r]


@jit()
def packing(shift):
    """The constants of the four counts packed ``shift`` bits each: ``(half, field mask, all four fields,
    bias)``, the bias adding ``half`` to the two signed fields (the ``S``) so that every field is nonnegative."""
    half = np.int64(1) << (shift - 1)
    fmask = (np.int64(1) << shift) - 1
    full = (np.int64(1) << (4 * shift)) - 1 if shift < 16 else np.int64(-1)
    return half, fmask, full, half + (half << shift)
