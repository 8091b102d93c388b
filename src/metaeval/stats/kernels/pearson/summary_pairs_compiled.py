"""The compiled loops of item-grouped Pearson: every pair's masked sums
(:class:`metaeval.stats.kernels.pearson.summary_pairs.PearsonSummaryCompiled`), the inputs where a permuted
vector may be constant (its risky rows), and the one-pair kernel's constancy test
(:class:`metaeval.stats.kernels.permutation.PermSummaryPearson`).

Compiled with :func:`metaeval.stats.kernels.compiler.decorator.jit` (cached on disk); imported on first use only.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["pearson_accumulate", "pearson_accumulate_skip", "permuted_constant", "risky_pearson_rows", "summary_pearson_sums"]


@jit(error_model="numpy")
def pearson_accumulate(u0, u1, u2, a0, a1, a2, n, row):
    """row[j] += r(u + a_j), Pearson's r of the sums (x, x^2, x z) ``u + a_j``, clipped to [-1, 1]."""
    for j in range(row.shape[0]):
        s0 = u0 + a0[j]
        r = (u2 + a2[j]) / np.sqrt((u1 + a1[j]) - s0 * s0 / n)
        row[j] += min(1.0, max(-1.0, r))



@jit(error_model="numpy")
def pearson_accumulate_skip(u0, u1, u2, a0, a1, a2, n, row, skip):
    """:func:`pearson_accumulate` for the ``j`` with ``skip[j] == 0`` only (a separate loop, so that the
    loop without skips stays vectorised)."""
    for j in range(row.shape[0]):
        if skip[j]:
            continue
        s0 = u0 + a0[j]
        r = (u2 + a2[j]) / np.sqrt((u1 + a1[j]) - s0 * s0 / n)
        row[j] += min(1.0, max(-1.0, r))



@jit()
def summary_pearson_sums(bits, lin, base, z_const, skip, any_skip, n, block, start, stop, total):
    """bits (M, N, b) uint8, lin (M, N, 3, P), base (M, 3, P), skip (M, P, P) uint8 and its ``any`` over the
    last axis ``any_skip`` (M, P); adds into ``total`` (b, P, P), for the resamples of the blocks of ``block``
    resamples ``start <= blk < stop``:
    T[s, i, j] = sum over the inputs ``b`` with ``skip[b, i, j] == 0`` of r(X') for the pair (i, j),
    X' = X_i + m (X_j - X_i); r(Y') of the pair is T[s, j, i] (``skip[b, j, i]``). Serial (``nogil``): the caller
    splits the blocks among its threads (each resample's sums run over the inputs in order, whatever the thread;
    a parallel loop took about as long again to compile)."""
    m, n_sys, b = bits.shape
    p = lin.shape[3]
    acc = np.empty((3, p))
    own = np.empty((3, p))
    for blk in range(start, stop):
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
                    if any_skip[col, i]:
                        pearson_accumulate_skip(own[0, i], own[1, i], own[2, i], acc[0], acc[1], acc[2], n,
                                                total[s, i], skip[col, i])
                    else:
                        pearson_accumulate(own[0, i], own[1, i], own[2, i], acc[0], acc[1], acc[2], n, total[s, i])



@jit(error_model="numpy")
def risky_pearson_rows(mask, keep, take, vkeep, vtake, n, noise, r, bad):
    """Pearson's r and Pearson's constancy of the permuted inputs of one pair, per resample and input:
    ``mask`` (b, N, c) bool, ``keep``/``take`` (N, c, 3) the terms of the kept and swapped-in metric, ``vkeep``/
    ``vtake`` (N, c) their values; writes ``r`` (b, c) (0 where constant) and ``bad`` (b, c). The sums run over
    the systems in order, as numpy's reduction along that axis; the rest is numpy's element-wise arithmetic
    (``clip``; ``max - min > noise max(|max|, |min|)``), so the values equal the numpy path's to the bit. Serial
    (``nogil``): the caller splits the resamples among its threads (each value computed alike in any thread)."""
    b, ns, c = mask.shape
    for s in range(b):
        for col in range(c):
            m0 = mask[s, 0, col]
            t = take if m0 else keep
            s0, s1, s2 = t[0, col, 0], t[0, col, 1], t[0, col, 2]
            v = vtake[0, col] if m0 else vkeep[0, col]
            hi = v
            lo = v
            for a in range(1, ns):
                if mask[s, a, col]:
                    s0 += take[a, col, 0]
                    s1 += take[a, col, 1]
                    s2 += take[a, col, 2]
                    v = vtake[a, col]
                else:
                    s0 += keep[a, col, 0]
                    s1 += keep[a, col, 1]
                    s2 += keep[a, col, 2]
                    v = vkeep[a, col]
                if v > hi:
                    hi = v
                if v < lo:
                    lo = v
            constant = not (hi - lo > noise * max(abs(hi), abs(lo)))
            bad[s, col] = constant
            if constant:
                r[s, col] = 0.0
            else:
                q = s2 / np.sqrt(s1 - s0 * s0 / n)
                r[s, col] = q if q != q else (-1.0 if q < -1.0 else (1.0 if q > 1.0 else q))



@jit()
def permuted_constant(mask, vkeep, vtake, noise, out):
    """``out[s, c] |=`` whether the permuted input ``c`` of resample ``s`` (``vtake`` where ``mask`` (b, N, c),
    else ``vkeep``, both (N, c)) is constant for Pearson's r: ``max - min <= noise max(|max|, |min|)``, the
    rule of :func:`metaeval.stats.correlations.ties.is_constant` on complete data. A spread above twice the
    bound stays above the bound whatever values follow (widening ``[min, max]`` by ``v`` adds at least
    ``noise |v|`` of spread for each unit of magnitude it adds), so the scan of an input stops there. Serial
    (``nogil``): the caller splits the resamples among its threads."""
    b, ns, c = mask.shape
    for s in range(b):
        for col in range(c):
            hi = vtake[0, col] if mask[s, 0, col] else vkeep[0, col]
            lo = hi
            wide = False
            for a in range(1, ns):
                v = vtake[a, col] if mask[s, a, col] else vkeep[a, col]
                if v > hi:
                    hi = v
                elif v < lo:
                    lo = v
                else:
                    continue
                if hi - lo > 2.0 * noise * max(abs(hi), abs(lo)):
                    wide = True
                    break
            if not wide and not (hi - lo > noise * max(abs(hi), abs(lo))):
                out[s, col] = True
