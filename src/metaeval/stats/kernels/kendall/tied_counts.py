"""The compiled loops over the groups where a pair's metrics tie, counted per resample.

With a metric tie in a group the denominators of ``X'`` and ``Y'`` depend on the swap mask, so
:class:`metaeval.stats.kernels.kendall.group_pairs.GroupPairsCompiled` counts those groups per resample:

* Kendall tau-b, vectorised over blocks of resamples (here): :func:`tied_sweep_inputs` merges the pair's two
  metrics' sorted values of each group in O(n), :func:`tied_sweep_counts` counts ``S``, the tied pairs and
  the distinct values of ``X'`` and ``Y'`` in one pass per block of resamples, and
  :func:`tied_sweep_corrections` decides the near ties (values closer than the pooled tolerance) per resample
  with the generic tie rule;
* every pair-count coefficient and Spearman, one resample at a time:
  :func:`metaeval.stats.kernels.kendall.group_counts.tied_group_counts` (an ordered pass with a Fenwick tree
  over the human ranks, or contingency tables for graded scores).
Compiled and cached by :mod:`metaeval.stats.kernels.compiler.decorator`; imported on first use only.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.compiler.decorator import jit, tolerance as _tolerance
from metaeval.stats.kernels.compiler.intrinsics import borrowed, keep_alive, next_task

__all__ = ["SPLIT_WIDTH", "SWEEP_WIDTH", "groups_per_task", "sweep_width", "tied_sweep_corrections", "tied_sweep_counts",
           "tied_sweep_inputs"]

LANES = 16
"""Blocks of :func:`tied_sweep_counts` are a multiple of this many resamples (whole AVX vectors, no scalar tail:
125 lanes ran 1.2-1.4x slower than 128); callers pad the resamples to a multiple of it."""

GROUPED = 8
"""Tie groups of at least this many pooled values are counted per human rank by :func:`tied_sweep_counts` (the
same counts; a 2.4-2.6x faster sweep on the workload of ``benchmarks/bench_kendall_ties.py``)."""


SWEEP_WIDTH = 128
"""Resamples per block of :func:`tied_sweep_counts` (the lanes of its vector adds; any width gives the same
counts)."""


SPLIT_WIDTH = 64
"""The narrowest block :func:`sweep_width` splits the resamples into to give every thread a task."""


def sweep_width(b: int, n_groups: int) -> int:
    """Resamples per block of :func:`tied_sweep_counts` for ``b`` resamples and ``n_groups`` groups: :data:`SWEEP_WIDTH`, or narrower (down to :data:`SPLIT_WIDTH`) when the groups
    times the blocks are fewer than the threads (:func:`metaeval.stats.kernels.parts.threads`; the global level is
    one group; a batch of 128 resamples in two blocks of 64 measured 3.1 ms against 4.3 ms in one on 2 threads,
    for 1.4x the CPU time)."""
    threads = parts.threads()
    blocks = -(-b // SWEEP_WIDTH)
    if n_groups * blocks >= threads:
        return SWEEP_WIDTH
    per_group = -(-threads // n_groups)
    return max(SPLIT_WIDTH, -(-b // per_group))


def groups_per_task(n_groups: int) -> int:
    """Groups one task of :func:`tied_sweep_counts` sweeps with one set of buffers: one for a few large groups (by-system rows), many for the inputs of the summary level (about
    eight tasks per thread)."""
    return max(1, n_groups // (8 * parts.threads()))


def _sweep_blocks(b, width):
    """``(width, blocks)``: blocks of about equal width (at most ``width``, rounded up to a multiple of
    :data:`LANES`: whole vectors, no scalar tail) covering ``b`` resamples."""
    n_chunks = (b + width - 1) // width
    width = (b + n_chunks - 1) // n_chunks
    width = min(width + (-width) % LANES, max(b, 1))
    return width, (b + width - 1) // width


@jit(inline="always")
def _query_values(e, f, g, values, s0, w, pooled, inserted, cum, ins, sums):
    """The values ``e <= u < f`` of a small tie group against the lower tie groups: each adds
    ``cum[r] + cum[r + 1] - ins`` (stream 1) or its complement in the pooled counts (stream 0) to its stream's
    ``S``, as its own bit decides in every lane (``values``: ``eflat, esrc, ez, bits``; ``sums``: its ``S``)."""
    (eflat, esrc, ez, bits), (s1, s0_acc, size1) = values, sums
    for u in range(e, f):
        r = ez[g, u]
        src = np.int32(esrc[g, u])
        row = bits[eflat[g, u], s0:s0 + w]
        qa = pooled[r] + pooled[r + 1] - inserted
        lo = cum[r]
        hi = cum[r + 1]
        for lane in range(w):
            t = np.int32(row[lane]) ^ src
            q1 = lo[lane] + hi[lane] - ins[lane]
            s1[lane] += t * q1
            s0_acc[lane] += (1 - t) * (qa - q1)
            size1[lane] += t


@jit(inline="always")
def _insert_values(e, f, g, eflat, esrc, ez, bits, s0, w, top, pooled, cum):
    """The values ``e <= u < f`` join the cumulative counts of every human rank above their own."""
    for u in range(e, f):
        r = ez[g, u]
        src = np.int32(esrc[g, u])
        row = bits[eflat[g, u], s0:s0 + w]
        for rr in range(r + 1, top + 2):
            pooled[rr] += 1
            dst = cum[rr]
            for lane in range(w):
                dst[lane] += np.int32(row[lane]) ^ src


@jit(inline="always")
def _sweep_large_group(e, f, g, values, s0, w, top, pooled, inserted, cum, ins, sums, work):
    """A tie group of many values: tallied per human rank (``h1`` stream 1, ``hc`` all), queried once per
    rank, inserted by one running prefix over the ranks; ``h1`` and ``hc`` are zero again on exit."""
    (eflat, esrc, ez, bits), (s1, s0_acc, size1), (h1, hc, run) = values, sums, work
    rmin = top
    rmax = 0
    for u in range(e, f):
        r = ez[g, u]
        rmin = min(rmin, r)
        rmax = max(rmax, r)
        src = np.int32(esrc[g, u])
        row = bits[eflat[g, u], s0:s0 + w]
        hc[r] += 1
        dst = h1[r]
        for lane in range(w):
            dst[lane] += np.int32(row[lane]) ^ src
    for r in range(rmin, rmax + 1):
        if hc[r] == 0:
            continue
        qa = pooled[r] + pooled[r + 1] - inserted
        lo = cum[r]
        hi = cum[r + 1]
        a = h1[r]
        for lane in range(w):
            q1 = lo[lane] + hi[lane] - ins[lane]
            s1[lane] += a[lane] * q1
            s0_acc[lane] += (hc[r] - a[lane]) * (qa - q1)
            size1[lane] += a[lane]
    run[:] = 0
    runc = 0
    for rr in range(rmin + 1, top + 2):
        if rr - 1 <= rmax:
            runc += hc[rr - 1]
            a = h1[rr - 1]
            for lane in range(w):
                run[lane] += a[lane]
            hc[rr - 1] = 0
            a[:] = 0
        pooled[rr] += runc
        dst = cum[rr]
        for lane in range(w):
            dst[lane] += run[lane]


@jit(inline="always")
def _close_tie_group(size, w, size1, ins, single1, t0, t1, d0, d1):
    """A tie group of ``size`` values, ``size1`` of them in stream 1 per lane: its tied pairs and distinct
    values (a single value is counted later, from the number of singles)."""
    if size == 1:
        for lane in range(w):
            ins[lane] += size1[lane]
            single1[lane] += size1[lane]
        return 1
    for lane in range(w):
        a1 = np.int64(size1[lane])
        a0 = size - a1
        ins[lane] += size1[lane]
        t0[lane] += (a0 * (a0 - 1)) >> 1
        t1[lane] += (a1 * (a1 - 1)) >> 1
        d0[lane] += a0 > 0
        d1[lane] += a1 > 0
    return 0


def tied_sweep_counts(eflat, esrc, ez, enew, nz, bits, width, grouped=GROUPED, per_task=1, out=None):
    """``S``, tied pairs and distinct values of ``X'`` and ``Y'`` of every group and resample, ``(b, G, 2, 3)``
    int64, in one pass over each group's pooled sorted values per block of ``width`` resamples.

    ``eflat`` (G, 2 n) the flat cell (row of ``bits`` (C, b) uint8, 1 = swap) of each pooled value in ascending
    order, ``esrc`` its metric (0 for ``X_i``, 1 for ``X_j``), ``ez`` the human dense rank of its cell (``< nz``),
    ``enew`` 1 where a value opens a tie group (a run of equal values). A value goes to stream ``bit ^ src``
    (0: ``X'``, 1: ``Y'``). With ``cum[r]`` the values of the lower tie groups of a stream with a human rank
    below ``r`` and ``ins`` all of them, a value of human rank ``r`` adds ``below - above = cum[r] + cum[r + 1]
    - ins`` to its stream's ``S`` (Knight 1966; :func:`_query_values`); then its tie group joins the counts
    (:func:`_insert_values`, :func:`_close_tie_group`). Every value joins one of the two streams, so stream 0's
    counts are the pooled counts (the same in every resample) minus stream 1's: only stream 1's are kept per
    resample. Every operation is an integer add over the resamples of the block, without a branch on the bits.

    A tie group of at least ``grouped`` values (rounded scores, judges' grades) is first tallied per human
    rank (``h1[r]`` its stream-1 values of rank ``r``, ``hc[r]`` all of them): its ``S`` is then one query per
    rank, ``sum_r h1[r] q1(r)`` and ``sum_r (hc[r] - h1[r]) (qa(r) - q1(r))``, and its insertion one running
    prefix over the ranks, ``cum[rr] += sum_{r < rr} h1[r]`` -- the same integer sums as value by value, in
    O(size + ranks) vector adds instead of O(size x ranks above) (:func:`_sweep_large_group`).

    A task sweeps ``per_task`` consecutive groups over one block of resamples with one set of buffers (small
    groups, as the inputs of the summary level, cost little beside allocating them). The tasks are dealt to the
    caller's threads (:func:`metaeval.stats.kernels.parts.run_parts`), each taking the next task when done with
    one (the groups' sizes vary); each task's counts are the same integers on any thread."""
    b = bits.shape[1]
    width, n_chunks = _sweep_blocks(b, width)
    n_tasks = (eflat.shape[0] + per_task - 1) // per_task * n_chunks
    if out is None:  # every cell is written; a caller may pass a buffer it reuses ((b, G, 2, 3) int64, C order)
        out = np.empty((b, eflat.shape[0], 2, 3), dtype=np.int64)
    parts.run_tasks(_sweep_tasks, n_tasks, (n_tasks, n_chunks, width, per_task), (eflat, esrc, ez, enew, bits), nz,
                    grouped, out)
    return out


@jit()
def _sweep_tasks(counter, tasks, values, nz, grouped, out):
    """The tasks of :func:`tied_sweep_counts` (``tasks``: ``n_tasks, n_chunks, width, per_task``; ``values``:
    ``eflat, esrc, ez, enew, bits``), each into its own cells of ``out``, taken in turn from ``counter``
    (:func:`~metaeval.stats.kernels.compiler.intrinsics.next_task`) by every thread running this loop. Serial
    (``nogil``); its buffers and ``bits`` are :func:`~metaeval.stats.kernels.compiler.intrinsics.borrowed` (the
    views taken per value are not reference-counted: 1.7x faster than without)."""
    (n_tasks, n_chunks, width, per_task), (eflat, esrc, ez, enew, bits) = tasks, values
    bits = borrowed(bits)
    g_count, length = eflat.shape
    b = bits.shape[1]
    while True:
        task = next_task(counter)
        if task >= n_tasks:
            break
        s0 = (task % n_chunks) * width
        w = min(b, s0 + width) - s0
        owners = (np.zeros((nz + 1, w), dtype=np.int32), np.zeros(nz + 1, dtype=np.int64),
                  np.zeros((nz + 1, w), dtype=np.int32), np.zeros(nz + 1, dtype=np.int64),
                  np.zeros((6, w), dtype=np.int64), np.zeros((4, w), dtype=np.int32))
        cum = borrowed(owners[0])  # stream 1
        pooled = borrowed(owners[1])  # both streams
        h1 = borrowed(owners[2])  # a large tie group's stream-1 values per human rank
        hc = borrowed(owners[3])  # and all its values per human rank
        acc = borrowed(owners[4])  # S, tied pairs, distinct values (stream 0, stream 1)
        lanes32 = borrowed(owners[5])  # ins, size1, run, single values of stream 1
        first = (task // n_chunks) * per_task
        for g in range(first, min(g_count, first + per_task)):
            top = 0  # the group's largest human rank: the counts above it are never read
            for u in range(length):
                top = max(top, ez[g, u])
            cum[:top + 2] = 0
            pooled[:top + 2] = 0
            acc[:] = 0
            lanes32[:] = 0
            s0_acc, s1, t0, t1, d0, d1 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
            ins, size1, run, single1 = lanes32[0], lanes32[1], lanes32[2], lanes32[3]
            singles = 0
            inserted = 0
            e = 0
            while e < length:
                f = e + 1
                while f < length and enew[g, f] == 0:
                    f += 1
                size1[:] = 0
                if f - e < grouped:
                    _query_values(e, f, g, (eflat, esrc, ez, bits), s0, w, pooled, inserted, cum, ins,
                                  (s1, s0_acc, size1))
                    _insert_values(e, f, g, eflat, esrc, ez, bits, s0, w, top, pooled, cum)
                else:
                    _sweep_large_group(e, f, g, (eflat, esrc, ez, bits), s0, w, top, pooled, inserted, cum, ins,
                                       (s1, s0_acc, size1), (h1, hc, run))
                inserted += f - e
                singles += _close_tie_group(f - e, w, size1, ins, single1, t0, t1, d0, d1)
                e = f
            for lane in range(w):
                out[s0 + lane, g, 0, 0] = s0_acc[lane]
                out[s0 + lane, g, 1, 0] = s1[lane]
                out[s0 + lane, g, 0, 1] = t0[lane]
                out[s0 + lane, g, 1, 1] = t1[lane]
                out[s0 + lane, g, 0, 2] = d0[lane] + singles - single1[lane]
                out[s0 + lane, g, 1, 2] = d1[lane] + single1[lane]
        keep_alive(owners)


@jit()
def tied_sweep_corrections(mval, eflat, esrc, ez, reg_g, reg_lo, reg_hi, nz, bits, rtol, noise, counts):
    """Correct the counts of :func:`tied_sweep_counts` (``counts`` (b, G, 2, 3), in place) in the regions of
    pooled values where a tie depends on the mask: runs ``reg_lo[q] <= e < reg_hi[q]`` of group ``reg_g[q]``
    whose sorted neighbours differ by at most the pooled tolerance. The sweep counted each run of equal values
    there as its own tie group; per resample and stream, sorted neighbours ``a < v`` of ``X'`` are tied when
    ``|v - a| <= tol(X')`` with ``tol(X') = max(rtol max - rtol min, noise max(|max|, |min|))`` of the stream's
    values (the generic rule), and the pairs across runs so joined move from ``S`` to the tied pairs."""
    b = bits.shape[1]
    length = mval.shape[1]
    for s in range(b):  # serial: a few near ties per pair, less work than waking the threads
        hist = np.zeros(nz, dtype=np.int64)
        cur = np.zeros(nz, dtype=np.int64)
        for q in range(reg_g.shape[0]):
            g = reg_g[q]
            for t in range(2):
                lo_v = 0.0
                for e in range(length):  # the stream's smallest and largest values
                    if (bits[eflat[g, e], s] ^ esrc[g, e]) == t:
                        lo_v = mval[g, e]
                        break
                hi_v = 0.0
                for e in range(length - 1, -1, -1):
                    if (bits[eflat[g, e], s] ^ esrc[g, e]) == t:
                        hi_v = mval[g, e]
                        break
                tol = _tolerance(hi_v, lo_v, rtol, noise) if rtol > 0.0 else 0.0
                tol = tol if np.isfinite(tol) else 0.0
                hist[:] = 0
                cur[:] = 0
                hcount = 0
                ccount = 0
                have = False
                last_v = 0.0
                for e in range(reg_lo[q], reg_hi[q]):
                    if (bits[eflat[g, e], s] ^ esrc[g, e]) != t:
                        continue
                    v = mval[g, e]
                    r = ez[g, e]
                    if have and v != last_v:
                        if abs(v - last_v) <= tol:  # the run joins the tie group of the previous runs
                            for k in range(nz):
                                hist[k] += cur[k]
                            hcount += ccount
                            counts[s, g, t, 2] -= 1
                        else:
                            hist[:] = 0
                            hcount = 0
                        cur[:] = 0
                        ccount = 0
                    if hcount > 0:  # the sweep counted sgn(z_v - z_a) for the earlier runs' values a
                        below = 0
                        for k in range(r):
                            below += hist[k]
                        above = hcount - below - hist[r]
                        counts[s, g, t, 0] -= below - above
                        counts[s, g, t, 1] += hcount
                    cur[r] += 1
                    ccount += 1
                    last_v = v
                    have = True


def tied_sweep_inputs(vals, orders, pairs, groups, cells, zr, rtol, noise, out):
    """The inputs of :func:`tied_sweep_counts` for the groups of several pairs, side by side, by merging the two
    metrics' sorted values (``vals`` (P, G, n) each group's values sorted ascending, ``orders`` their cells):
    ``out = (mval, eflat, esrc, ez, enew, near)``, each (G', 2 n), the groups ``groups[ptr[p]:ptr[p + 1]]`` of pair
    ``(first[p], second[p])`` in turn (``pairs``: ``first, second, ptr``); ``near`` is 1 where a value differs from
    the one before by at most the tolerance of the group's pooled values (``max(rtol spread, noise max|v|)``,
    times ``1 + 1e-6``; 0 everywhere under ``rtol = 0``). Every cell of ``out`` is written: the caller passes
    buffers it reuses (tens of MB for a few dozen by-system pairs: fresh ones cost more in page faults than the
    merge itself). The pairs are dealt to the caller's threads, each taking the next when done with one
    (:func:`metaeval.stats.kernels.parts.run_parts`); each group's rows are its own."""
    parts.run_tasks(_merged_rows, pairs[0].shape[0], (vals, orders, cells, zr), pairs, groups, (rtol, noise), out)


@jit()
def _merged_rows(counter, values, pairs, groups, rule, out):
    """The pairs of :func:`tied_sweep_inputs` taken in turn from ``counter``
    (:func:`~metaeval.stats.kernels.compiler.intrinsics.next_task`). Serial (``nogil``)."""
    (vals, orders, cells, zr), (first, second, ptr), (rtol, noise) = values, pairs, rule
    mval, eflat, esrc, ez, enew, near = out
    n = vals.shape[2]
    length = 2 * n
    while True:
        p = next_task(counter)
        if p >= first.shape[0]:
            break
        i = first[p]
        j = second[p]
        for q in range(ptr[p], ptr[p + 1]):
            g = groups[q]
            a = 0
            b = 0
            for e in range(length):
                if b >= n or (a < n and vals[i, g, a] <= vals[j, g, b]):
                    c = orders[i, g, a]
                    mval[q, e] = vals[i, g, a]
                    esrc[q, e] = 0
                    a += 1
                else:
                    c = orders[j, g, b]
                    mval[q, e] = vals[j, g, b]
                    esrc[q, e] = 1
                    b += 1
                eflat[q, e] = cells[g, c]
                ez[q, e] = zr[g, c]
            lo = mval[q, 0]
            hi = mval[q, length - 1]
            tol = _tolerance(hi, lo, rtol, noise) * (1.0 + 1e-6) if rtol > 0.0 else 0.0
            tol = tol if np.isfinite(tol) else 0.0
            enew[q, 0] = 1
            near[q, 0] = 0
            for e in range(1, length):
                gap = mval[q, e] - mval[q, e - 1]
                enew[q, e] = 1 if gap != 0.0 else 0
                near[q, e] = 1 if gap != 0.0 and gap <= tol else 0


# ---- one resample at a time: every pair-count coefficient and Spearman --------------------------
