"""The block tables of :mod:`metaeval.stats.kernels.kendall.blocks_compiled` for many metric pairs at once (lanes).

The packed counts and tables, built and read for ``Q`` metric pairs side by side: every array holds the
pairs in its last axis (``D[a, c, q]``, ``table[entry, q]``), so that one table entry of all the lanes is one
contiguous row and the loops over system pairs, table entries and resamples are shared by the lanes. A
resample's reads are vector code (:mod:`metaeval.stats.kernels.compiler.intrinsics`: one vector add per table), so the
caller gives the lanes a plan of more, smaller tables than one pair at a time would take
(:data:`metaeval.stats.kernels.kendall.blocks._LANE_ENTRY_COST`); the integer sums do not depend on the plan.
A lane whose pair does not list the input holds NaN values (every comparison false: no term) and adds exactly
``+0.0`` to its sums; a lane with a *near* tie is flagged and emptied the same way. The sums of each pair are
formed in the order of its listed inputs (ascending), each input's term ``S(X') w[T(X')] - S(Y') w[T(Y')]``, so
a pair's sums do not depend on the other lanes, the plan or the threads. This is the only compiled loop of the
block tables: the pairs that count every input and those that count only their few tied inputs (once a loop
of its own, one pair at a time, with the same bits; issue 37) both run here, in batches of their own.

Under ``undefined='skip'`` a lane whose permuted input can be constant (:func:`constant_possible`: some value
``v`` with ``x_a = v`` or ``y_a = v`` for every system) is *tracked*: besides the difference it keeps the two
sums ``sum S(X') w[T(X')]`` and ``sum S(Y') w[T(Y')]`` and the number of inputs where ``X'`` and ``Y'`` are
constant (``T = n0``, whose weight is 0 here), from which the caller forms the mean over the defined inputs.
Compiled and cached like every loop of ``stats/`` (:mod:`metaeval.stats.kernels.compiler.decorator`); imported on first use.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit, tolerance as _tolerance
from metaeval.stats.kernels.kendall.blocks_compiled import packing
from metaeval.stats.kernels.compiler.intrinsics import LANES, lane_weighted_sum, lane_word

__all__ = ["LANES", "constant_possible", "lane_tau_b_sums"]


@jit()
def constant_possible(xt, first, second, out):
    """``out[q, j]``: whether some mask makes the values of pair ``q`` (metrics ``first[q]``, ``second[q]`` of
    ``xt`` (P, M, N)) constant at input ``j``: ``v = x_0`` or ``v = y_0`` with ``x_a = v`` or ``y_a = v`` for all
    ``a`` (then ``X'`` or ``Y'``, the other choice, can be constant). Serial: the caller splits the pairs among its
    threads."""
    n = xt.shape[2]
    for q in range(first.size):
        for j in range(xt.shape[1]):
            x = xt[first[q], j]
            y = xt[second[q], j]
            ok_x = True
            ok_y = True
            for a in range(n):
                ok_x &= (x[a] == x[0]) | (y[a] == x[0])
                ok_y &= (x[a] == y[0]) | (y[a] == y[0])
            out[q, j] = ok_x | ok_y


@jit()
def _lane_near(xv, yv, tol, near):
    """``near[q]``: a gap in ``(0, tol[q]]`` between two values of lane ``q`` that can meet in one ``X'``."""
    n, lanes = xv.shape
    for q in range(lanes):
        near[q] = False
    for a in range(n):
        xa = xv[a]
        ya = yv[a]
        for c in range(a + 1, n):
            xc = xv[c]
            yc = yv[c]
            for q in range(lanes):
                tq = tol[q]
                d0 = abs(xa[q] - xc[q])
                d1 = abs(xa[q] - yc[q])
                d2 = abs(ya[q] - xc[q])
                d3 = abs(ya[q] - yc[q])
                near[q] |= (((d0 != 0.0) & (d0 <= tq)) | ((d1 != 0.0) & (d1 <= tq))
                            | ((d2 != 0.0) & (d2 <= tq)) | ((d3 != 0.0) & (d3 <= tq)))


@jit()
def _lane_terms(xv, yv, tz, shift, delta, lam, alpha):
    """The packed terms of every lane: ``alpha[q]``, ``lam[a, q]`` (every ``beta`` of system ``a`` as the first of
    a pair, every ``gamma`` as the second) and ``delta[a, c, q] = delta[c, a, q]``; ``tz[a, c]`` the human's signs.

    With ``p_k = t sgn(d_k) + [d_k = 0] 2^(2 shift)`` the contribution to ``S(X')`` and ``T(X')`` for the bits
    ``k = 2 m_a + m_c`` (``d_k`` the gap of the two values ``X'`` then holds), ``Y'`` holds the other values
    (``k -> 3 - k``): ``c_k = p_k + p_(3-k) 2^shift``, so ``alpha = c_0``, ``beta = c_2 - c_0``, ``gamma = c_1 - c_0``
    and ``delta = c_3 - c_2 - c_1 + c_0 = (p_0 - p_1 - p_2 + p_3) (1 + 2^shift)``. A lane of NaN values (a pair
    that does not list the input) compares false everywhere: every term 0."""
    n, lanes = xv.shape
    tie = np.int64(1) << (2 * shift)
    both = np.int64(1) + (np.int64(1) << shift)
    for a in range(n):
        la = lam[a]
        for q in range(lanes):
            la[q] = 0
    for q in range(lanes):
        alpha[q] = 0
    for a in range(n):
        xa = xv[a]
        ya = yv[a]
        la = lam[a]
        for c in range(a + 1, n):
            t = tz[a, c]
            xc = xv[c]
            yc = yv[c]
            lc = lam[c]
            dac = delta[a, c]
            dca = delta[c, a]
            for q in range(lanes):
                d0 = xa[q] - xc[q]
                d1 = xa[q] - yc[q]
                d2 = ya[q] - xc[q]
                d3 = ya[q] - yc[q]
                p0 = t * (np.int64(d0 > 0.0) - np.int64(d0 < 0.0)) + tie * np.int64(d0 == 0.0)
                p1 = t * (np.int64(d1 > 0.0) - np.int64(d1 < 0.0)) + tie * np.int64(d1 == 0.0)
                p2 = t * (np.int64(d2 > 0.0) - np.int64(d2 < 0.0)) + tie * np.int64(d2 == 0.0)
                p3 = t * (np.int64(d3 > 0.0) - np.int64(d3 < 0.0)) + tie * np.int64(d3 == 0.0)
                alpha[q] += p0 + (p3 << shift)
                la[q] += (p2 - p0) + ((p1 - p3) << shift)
                lc[q] += (p1 - p0) + ((p2 - p3) << shift)
                dd = (p0 - p1 - p2 + p3) * both
                dac[q] = dd
                dca[q] = dd


@jit()
def _lane_own(delta, lam, first, size, out):
    """``out[m, q]``: the own terms of one block under its bits ``m``: ``sum_{u in m} lam[u, q] + sum_{u < v in m}
    delta[u, v, q]`` (by doubling: the entries with bit ``u`` set from those without)."""
    lanes = out.shape[1]
    o0 = out[0]
    for q in range(lanes):
        o0[q] = 0
    for u in range(size):
        a = first + u
        half = 1 << u
        la = lam[a]
        for m in range(half):
            src = out[m]
            dst = out[m + half]
            for q in range(lanes):
                dst[q] = src[q] + la[q]
            for v in range(u):
                if (m >> v) & 1:
                    dv = delta[first + v, a]
                    for q in range(lanes):
                        dst[q] += dv[q]


@jit()
def _lane_fill(delta, og, sg, oh, sh, own_g, own_h, base, cols, add, table, offset):
    """Table of blocks ``g < h`` of every lane at ``table[offset + (mh << sg) + mg, q]``: ``base + own_g[mg] +
    own_h[mh] + sum_{a in mg, c in mh} delta[a, c]``; the rows with bit ``v`` of ``mh`` set are those without it
    plus the column sums of system ``oh + v`` and the change of ``own_h`` (``add`` scratch of one row). Entries
    wrap in the table's integer type (the packed sums are exact modulo it)."""
    lanes = table.shape[1]
    width = 1 << sg
    for v in range(sh):
        col = cols[v]
        for q in range(lanes):
            col[0, q] = 0
        for u in range(sg):
            half = 1 << u
            step = delta[og + u, oh + v]
            for m in range(half):
                for q in range(lanes):
                    col[m + half, q] = col[m, q] + step[q]
    block = table[offset:offset + width]
    for mg in range(width):
        for q in range(lanes):
            block[mg, q] = base[q] + own_h[0, q] + own_g[mg, q]
    flat = table.reshape(table.size)
    for v in range(sh):
        half = 1 << v
        col = cols[v]
        for mh in range(half):
            if lanes == 1:  # a pair at a time: one contiguous row (a vector loop over mg)
                one = col.reshape(col.size)
                step = own_h[mh + half, 0] - own_h[mh, 0]
                at = offset + mh * width
                to = offset + (mh + half) * width
                for mg in range(width):
                    flat[to + mg] = flat[at + mg] + one[mg] + step
                continue
            src = table[offset + mh * width:offset + (mh + 1) * width]
            dst = table[offset + (mh + half) * width:offset + (mh + half + 1) * width]
            for q in range(lanes):
                add[q] = own_h[mh + half, q] - own_h[mh, q]
            for mg in range(width):
                for q in range(lanes):
                    dst[mg, q] = src[mg, q] + col[mg, q] + add[q]


@jit()
def _one_lane_reads(table, rows, bias, shift, weights, out):
    """``out[r] += S(X') w[T(X')] - S(Y') w[T(Y')]`` of the word ``bias + sum_t table[rows[t, r]]`` of one lane (a pair
    at a time): the integer sum in int64, modulo the four fields, as scalar code (the arithmetic of the lanes)."""
    half, fmask, full, _ = packing(shift)
    n_tables = rows.shape[0]
    r0 = rows[0]
    r1 = rows[min(1, n_tables - 1)]
    r2 = rows[min(2, n_tables - 1)]
    for r in range(rows.shape[1]):
        if n_tables == 3:  # the common plan (15 systems in blocks of five): three reads
            v = bias + np.int64(table[r0[r]]) + np.int64(table[r1[r]]) + np.int64(table[r2[r]])
        else:
            v = bias
            for t in range(n_tables):
                v += np.int64(table[rows[t, r]])
        v &= full
        s_x = (v & fmask) - half
        s_y = ((v >> shift) & fmask) - half
        out[r] += s_x * weights[(v >> (2 * shift)) & fmask] - s_y * weights[(v >> (3 * shift)) & fmask]


@jit()
def lane_tau_b_sums(xt, lane_lists, zr, scales, tie, plan, idx, track, n0, sums, near, kind):
    """``acc[p, r]``: ``sum_j scales[j, T(X')] S(X') - scales[j, T(Y')] S(Y')`` of pair ``p`` over its listed
    inputs (``groups[ptr[p]:ptr[p + 1]]``, ascending), for the pairs of each batch ``b`` in its lanes
    (``lane_pair[b, q]``, -1 for an empty lane; metrics ``lane_first``, ``lane_second`` of ``xt`` (P, M, N)).
    Batches are :data:`LANES` lanes wide (the reads as vector code) or one (a pair at a time, for the pairs that
    list few inputs; scalar reads, the same sums; never tracked). ``idx`` (M, L, k): the table entries of every
    resample (``blocks_compiled.block_indices``); ``kind``: an array of the packed type (int32 for 8-bit fields,
    int64 for 16). A lane with a near tie at an input is flagged in ``near[u]`` (``u`` its place in ``groups``)
    and skipped there. Batches with ``track[b]`` also fill ``acc_x``, ``acc_y`` (the two sums) and ``und_x``,
    ``und_y`` (inputs where ``T = n0``), rows by pair. Serial (``nogil``): the caller runs disjoint sets of
    batches on its threads (:func:`metaeval.stats.kernels.parts.run_parts`; a parallel loop here took about twice
    as long to compile)."""
    lane_pair, lane_first, lane_second, ptr, groups = lane_lists
    rtol, noise, shift = tie
    block_first, block_size, table_first, table_second, table_offset, owner = plan
    acc, acc_x, acc_y, und_x, und_y = sums
    n = xt.shape[2]
    k = idx.shape[2]
    lanes = lane_pair.shape[1]
    n_tables = table_first.size
    n_blocks = block_first.size
    half, fmask, full, bias = packing(shift)
    widest = block_size.max()
    entries = 0
    for t in range(n_tables):
        entries = max(entries, table_offset[t] + (1 << (block_size[table_first[t]] + block_size[table_second[t]])))
    for b in range(lane_pair.shape[0]):
        xv = np.empty((n, lanes))
        yv = np.empty((n, lanes))
        delta = np.zeros((n, n, lanes), dtype=kind.dtype)
        lam = np.zeros((n, lanes), dtype=kind.dtype)
        alpha = np.zeros(lanes, dtype=kind.dtype)
        nothing = np.zeros(lanes, dtype=kind.dtype)
        own = np.zeros((n_blocks, 1 << widest, lanes), dtype=kind.dtype)
        zeros = np.zeros((1 << widest, lanes), dtype=kind.dtype)
        cols = np.zeros((widest, 1 << widest, lanes), dtype=kind.dtype)
        table = np.zeros((entries, lanes), dtype=kind.dtype)
        packed = np.zeros(lanes, dtype=kind.dtype)
        add = np.zeros(lanes, dtype=kind.dtype)
        tz = np.zeros((n, n), dtype=np.int64)
        tol = np.zeros(lanes)
        is_near = np.zeros(lanes, dtype=np.bool_)
        at = np.full(lanes, -1, dtype=np.int64)
        cursor = np.zeros(lanes, dtype=np.int64)
        out = np.zeros((k, lanes))
        kt = k if track[b] else 0
        out_x = np.zeros((kt, lanes))
        out_y = np.zeros((kt, lanes))
        cnt_x = np.zeros((kt, lanes), dtype=np.int32)
        cnt_y = np.zeros((kt, lanes), dtype=np.int32)
        for q in range(lanes):
            if lane_pair[b, q] >= 0:
                cursor[q] = ptr[lane_pair[b, q]]
        for j in range(zr.shape[0]):
            active = False
            for q in range(lanes):
                p = lane_pair[b, q]
                at[q] = -1
                if p >= 0 and cursor[q] < ptr[p + 1] and groups[cursor[q]] == j:
                    at[q] = cursor[q]
                    cursor[q] += 1
                    active = True
            if not active:
                continue
            for q in range(lanes):
                tol[q] = 0.0
                if at[q] < 0:
                    for a in range(n):
                        xv[a, q] = np.nan
                        yv[a, q] = np.nan
                    continue
                x = xt[lane_first[b, q], j]
                y = xt[lane_second[b, q], j]
                for a in range(n):
                    xv[a, q] = x[a]
                    yv[a, q] = y[a]
                if rtol > 0.0:
                    tol[q] = _tolerance(max(x.max(), y.max()), min(x.min(), y.min()), rtol, noise)
            if rtol > 0.0:
                _lane_near(xv, yv, tol, is_near)
                for q in range(lanes):
                    if at[q] >= 0 and is_near[q]:
                        near[at[q]] = 1
                        at[q] = -1
                        for a in range(n):
                            xv[a, q] = np.nan
                            yv[a, q] = np.nan
                active = False
                for q in range(lanes):
                    active |= at[q] >= 0
                if not active:
                    continue
            zj = zr[j]
            for a in range(n):
                for c in range(a + 1, n):
                    tz[a, c] = np.int64(zj[a] > zj[c]) - np.int64(zj[a] < zj[c])
            _lane_terms(xv, yv, tz, shift, delta, lam, alpha)
            for g in range(n_blocks):
                _lane_own(delta, lam, block_first[g], block_size[g], own[g])
            for t in range(n_tables):
                g = table_first[t]
                h = table_second[t]
                _lane_fill(delta, block_first[g], block_size[g], block_first[h], block_size[h],
                           own[g] if owner[g] == t else zeros, own[h] if owner[h] == t else zeros,
                           alpha if t == 0 else nothing, cols, add, table, table_offset[t])
            sc = scales[j]
            rows = idx[j]
            if lanes == 1:  # a pair at a time (never tracked)
                _one_lane_reads(table[:, 0], rows, bias, shift, sc, out[:, 0])
                continue
            if kt == 0 and shift == 8:  # 32-bit counts, untracked: the whole read as vector code
                for r in range(k):
                    lane_weighted_sum(table, rows, r, bias, sc, out)
                continue
            for r in range(k):
                lane_word(table, rows, r, bias, packed)
                o = out[r]
                if kt == 0:
                    for q in range(lanes):
                        v = np.int64(packed[q]) & full
                        s_x = (v & fmask) - half
                        s_y = ((v >> shift) & fmask) - half
                        o[q] += s_x * sc[(v >> (2 * shift)) & fmask] - s_y * sc[(v >> (3 * shift)) & fmask]
                    continue
                ox = out_x[r]
                oy = out_y[r]
                cx = cnt_x[r]
                cy = cnt_y[r]
                for q in range(lanes):
                    v = np.int64(packed[q]) & full
                    t_x = (v >> (2 * shift)) & fmask
                    t_y = (v >> (3 * shift)) & fmask
                    u_x = ((v & fmask) - half) * sc[t_x]
                    u_y = (((v >> shift) & fmask) - half) * sc[t_y]
                    o[q] += u_x - u_y
                    ox[q] += u_x
                    oy[q] += u_y
                    cx[q] += np.int32(t_x == n0)
                    cy[q] += np.int32(t_y == n0)
        for q in range(lanes):
            p = lane_pair[b, q]
            if p < 0:
                continue
            for r in range(k):
                acc[p, r] = out[r, q]
            for r in range(kt):
                acc_x[p, r] = out_x[r, q]
                acc_y[p, r] = out_y[r, q]
                und_x[p, r] = cnt_x[r, q]
                und_y[p, r] = cnt_y[r, q]
