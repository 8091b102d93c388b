"""The compiled loops of summary-level Kendall tau-b under PERM-BOTH where a pair's metrics tie within an input.

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
one integer add per entry (:func:`_fill_table`: rows added by doubling over the bits of ``h``, vectorised over
the bits of ``g``); a resample then sums ``B (B - 1) / 2`` entries, at indices that are the same for every
metric pair (:func:`block_indices`, once per batch), and unpacks its four counts: for 15 systems in blocks of
five, three table reads per input and resample in place of 105 sign evaluations.

Ties are exact here: a pair and input are counted only when every gap between two of its values that can meet in
one permuted vector is 0 (tied in every ``X'``) or above the tie tolerance of the pair's pooled values of that
input (tied in none: the tolerance of any ``X'``, ``max(rtol spread(X'), NOISE_RTOL max|X'|)``, is at most that
of the pooled values). A *near* tie, whose fate depends on the spread of each ``X'``, is flagged and left to the
caller. Compiled and cached like every loop of ``stats/`` (:mod:`metaeval.stats.kernels.compiler.decorator`); imported on first use.
"""
from __future__ import annotations

import numba
import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit, tolerance as _tolerance

__all__ = ["block_indices", "block_tau_b_sums", "packing"]


@jit(parallel=True)
def block_indices(bits, block_first, block_size, table_first, table_second, table_offset, out):
    """``out[j, t, r]``: the entry of table ``t`` (blocks ``g = table_first[t] < h = table_second[t]``) that
    resample ``r`` reads at input ``j``: ``table_offset[t] + (bits of block h) << s_g + (bits of block g)``, the
    bits of a block (systems ``block_first[g]``, ... ``block_size[g]`` of them) least significant first.
    ``bits`` (M, N, k) uint8, 1 = swap."""
    m = bits.shape[0]
    k = bits.shape[2]
    n_blocks = block_first.size
    for j in numba.prange(m):
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
def _terms(x, y, zr, tol, shift, delta, lam):
    """The packed terms of one metric pair and input: returns ``(alpha, near)`` and fills ``lam[a]`` (every
    ``beta`` of system ``a`` as the first of a pair, every ``gamma`` as the second) and ``delta[a, c]`` (``a < c``).

    With ``p_k = t sgn(d_k) + [d_k = 0] 2^(2 shift)`` the contribution to ``S(X')`` and ``T(X')`` for the bits
    ``k = 2 m_a + m_c`` (``d_k`` the gap of the two values ``X'`` then holds), ``Y'`` holds the other values
    (``k -> 3 - k``): ``c_k = p_k + p_(3-k) 2^shift``, so ``alpha = c_0``, ``beta = c_2 - c_0``, ``gamma = c_1 - c_0``
    and ``delta = c_3 - c_2 - c_1 + c_0 = (p_0 - p_1 - p_2 + p_3) (1 + 2^shift)``. ``near``: a gap in ``(0, tol]``
    between two values that can meet in one permuted vector."""
    n = x.size
    tie = np.int64(1) << (2 * shift)
    both = np.int64(1) + (np.int64(1) << shift)
    alpha = np.int64(0)
    near = False
    for a in range(n):
        lam[a] = 0
    for a in range(n):
        xa = x[a]
        ya = y[a]
        za = zr[a]
        own = np.int64(0)
        for c in range(a + 1, n):
            zc = zr[c]
            t = np.int64(za > zc) - np.int64(za < zc)
            d0 = xa - x[c]  # bits (0, 0): X' holds x_a and x_c
            d1 = xa - y[c]  # (0, 1)
            d2 = ya - x[c]  # (1, 0)
            d3 = ya - y[c]  # (1, 1)
            near |= ((d0 != 0.0) & (abs(d0) <= tol)) | ((d1 != 0.0) & (abs(d1) <= tol))
            near |= ((d2 != 0.0) & (abs(d2) <= tol)) | ((d3 != 0.0) & (abs(d3) <= tol))
            p0 = t * (np.int64(d0 > 0.0) - np.int64(d0 < 0.0)) + tie * np.int64(d0 == 0.0)
            p1 = t * (np.int64(d1 > 0.0) - np.int64(d1 < 0.0)) + tie * np.int64(d1 == 0.0)
            p2 = t * (np.int64(d2 > 0.0) - np.int64(d2 < 0.0)) + tie * np.int64(d2 == 0.0)
            p3 = t * (np.int64(d3 > 0.0) - np.int64(d3 < 0.0)) + tie * np.int64(d3 == 0.0)
            alpha += p0 + (p3 << shift)
            own += (p2 - p0) + ((p1 - p3) << shift)
            lam[c] += (p1 - p0) + ((p2 - p3) << shift)
            delta[a, c] = (p0 - p1 - p2 + p3) * both
        lam[a] += own
    return alpha, near


@jit()
def _own_terms(delta, lam, first, size, out):
    """``out[m]``: the own terms of one block under its bits ``m``: ``sum_{u in m} lam[u] + sum_{u < v in m}
    delta[u, v]`` (by doubling: the entries with bit ``u`` set from those without)."""
    out[0] = 0
    for u in range(size):
        a = first + u
        half = 1 << u
        for m in range(half):
            extra = lam[a]
            for v in range(u):
                if (m >> v) & 1:
                    extra += delta[first + v, a]
            out[m + half] = out[m] + extra


@jit()
def _fill_table(delta, og, sg, oh, sh, own_g, own_h, base, cols, table, offset):
    """Table of blocks ``g < h`` at ``table[offset + (mh << sg) + mg]``: ``base + own_g[mg] + own_h[mh] +
    sum_{a in mg, c in mh} delta[a, c]``. ``cols[v, mg]`` is system ``oh + v``'s ``sum_{a in mg} delta[a, oh + v]``;
    the row of ``mh`` with bit ``v`` set is the row without it plus ``cols[v]`` and the change of ``own_h``
    (a vector add over ``mg``). Entries are stored modulo the table's integer width (the packed sums are
    exact modulo it)."""
    width = 1 << sg
    for v in range(sh):
        col = cols[v]
        col[0] = 0
        for u in range(sg):
            half = 1 << u
            step = delta[og + u, oh + v]
            for m in range(half):
                col[m + half] = col[m] + step
    lead = base + own_h[0]
    row = table[offset:offset + width]
    for mg in range(width):
        row[mg] = lead + own_g[mg]
    for v in range(sh):
        half = 1 << v
        col = cols[v]
        src = table[offset:offset + half * width]  # the rows without bit v
        dst = table[offset + half * width:offset + 2 * half * width]  # the same rows with it
        for mh in range(half):
            add = own_h[mh + half] - own_h[mh]
            at = mh * width
            for mg in range(width):
                dst[at + mg] = np.int64(src[at + mg]) + col[mg] + add


@jit()
def packing(shift):
    """The constants of the four counts packed ``shift`` bits each: ``(half, field mask, all four fields,
    bias)``, the bias adding ``half`` to the two signed fields (the ``S``) so that every field is nonnegative."""
    half = np.int64(1) << (shift - 1)
    fmask = (np.int64(1) << shift) - 1
    full = (np.int64(1) << (4 * shift)) - 1 if shift < 16 else np.int64(-1)
    return half, fmask, full, half + (half << shift)


@jit(parallel=True)
def block_tau_b_sums(xt, pairs, zr, scales, tie, plan, task_ptr, tables, idx, acc, near):
    """Add ``scales[j, T(X')] S(X') - scales[j, T(Y')] S(Y')`` of every listed input ``j`` to ``acc[q, r]``.

    Pair ``q`` (metrics ``first[q]``, ``second[q]`` of ``xt`` (P, M, N)) lists its inputs in ascending order in
    ``groups[ptr[q]:ptr[q + 1]]``; ``zr`` (M, N) are the human's dense ranks, ``scales[j, t]`` the weight of
    ``S`` when ``t`` pairs of the permuted metric tie (NaN or 0 where it is constant, as the caller decides),
    ``idx`` (M, L, k) the table entries of every resample (:func:`block_indices`); ``tables`` (tasks, entries) is
    scratch (uint32 for 8-bit fields, int64 for 16). Block ``g``'s own terms are held by table ``owner[g]``. An
    input with a near tie (a gap in ``(0, tol]``, ``tol`` the tie tolerance of the pair's pooled values of that
    input, 0 under ``rtol = 0``) is skipped and flagged in ``near[ptr[q] + u]``. Tasks (``task_ptr``: consecutive
    pairs of about equal work) run in parallel, each over the inputs in order, its pairs at each input (the
    table indices of an input are read from cache by all of them); each pair's inputs are added in the order
    listed, so the sums do not depend on the threads or the batch."""
    first, second, ptr, groups = pairs
    rtol, noise, shift = tie
    block_first, block_size, table_first, table_second, table_offset, owner = plan
    n = xt.shape[2]
    k = idx.shape[2]
    n_tables = table_first.size
    n_blocks = block_first.size
    half, fmask, full, bias = packing(shift)
    widest = block_size.max()
    for task in numba.prange(task_ptr.size - 1):
        table = tables[task]
        delta = np.zeros((n, n), dtype=np.int64)
        lam = np.zeros(n, dtype=np.int64)
        own = np.zeros((n_blocks, 1 << widest), dtype=np.int64)
        zeros = np.zeros(1 << widest, dtype=np.int64)
        cols = np.zeros((widest, 1 << widest), dtype=np.int64)
        packed = np.zeros(k, dtype=np.int64)
        q0 = task_ptr[task]
        q1 = task_ptr[task + 1]
        cursor = ptr[q0:q1].copy()  # each pair's next listed input (lists ascending): inputs outermost, so
        for j in range(zr.shape[0]):  # the table indices of an input are read once for the task's pairs
            rows = idx[j]
            sc = scales[j]
            for q in range(q0, q1):
                u = cursor[q - q0]
                if u >= ptr[q + 1] or groups[u] != j:
                    continue
                cursor[q - q0] = u + 1
                x = xt[first[q], j]
                y = xt[second[q], j]
                tol = 0.0
                if rtol > 0.0:
                    tol = _tolerance(max(x.max(), y.max()), min(x.min(), y.min()), rtol, noise)
                alpha, is_near = _terms(x, y, zr[j], tol, shift, delta, lam)
                if is_near:
                    near[u] = 1
                    continue
                for g in range(n_blocks):
                    _own_terms(delta, lam, block_first[g], block_size[g], own[g])
                for t in range(n_tables):
                    g = table_first[t]
                    h = table_second[t]
                    _fill_table(delta, block_first[g], block_size[g], block_first[h], block_size[h],
                                own[g] if owner[g] == t else zeros, own[h] if owner[h] == t else zeros,
                                alpha if t == 0 else np.int64(0), cols, table, table_offset[t])
                out = acc[q]
                if n_tables == 3:
                    r0 = rows[0]
                    r1 = rows[1]
                    r2 = rows[2]
                    for r in range(k):
                        v = (np.int64(table[r0[r]]) + np.int64(table[r1[r]]) + np.int64(table[r2[r]]) + bias) & full
                        s_x = (v & fmask) - half
                        s_y = ((v >> shift) & fmask) - half
                        out[r] += s_x * sc[(v >> (2 * shift)) & fmask] - s_y * sc[(v >> (3 * shift)) & fmask]
                    continue
                for r in range(k):
                    packed[r] = bias
                for t in range(n_tables):
                    row = rows[t]
                    for r in range(k):
                        packed[r] += np.int64(table[row[r]])
                for r in range(k):
                    v = packed[r] & full
                    s_x = (v & fmask) - half
                    s_y = ((v >> shift) & fmask) - half
                    out[r] += s_x * sc[(v >> (2 * shift)) & fmask] - s_y * sc[(v >> (3 * shift)) & fmask]
