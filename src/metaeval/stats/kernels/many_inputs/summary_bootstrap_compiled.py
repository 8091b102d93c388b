"""The compiled loops of :mod:`metaeval.stats.kernels.many_inputs.summary_bootstrap` (numba, cached on disk like
:mod:`metaeval.stats.kernels.compiler.decorator`; imported on first use only).

Every loop keeps the resamples innermost (``wt`` is (N, b): the system multiplicities of the batch, resamples
contiguous), so each statement is one vectorised pass over the batch. Each per-input correlation ``r`` of a
resample ``s`` is added to the aggregate at once: ``total[s] += c_js r`` and ``used[s] += c_js`` for a defined
``r`` (and ``used[s] += c_js`` for an undefined one when ``skip`` is False), ``c_js`` the count of input ``j`` in
the resample (1 when the inputs are not resampled). The correlations of an input are first written to a row
(``rr``) and then added in one branch-free loop (:func:`_add`), so both loops vectorise: the loops use numpy's
error model (a division by zero in a lane that is then discarded raises nothing). The rank loops take float32
or float64 weights (the caller chooses float32 where every sum is an exact integer below 2^24).
"""
from __future__ import annotations

import math

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["kendall_inputs", "pearson_inputs", "spearman_inputs"]


@jit(error_model="numpy")
def _add(total, used, counts, has_counts, skip, j, r, left):
    """Add ``c_js r[s]`` to ``total[0, s]`` for every resample ``s`` of the batch (Neumaier's compensated sum,
    the compensation in ``total[1, s]``: the aggregate of many inputs is as exact as numpy's pairwise sum) and
    ``c_js`` to ``used[s]``; an undefined ``r[s]`` (NaN) adds nothing to the sums, and ``c_js`` to ``used[s]``
    unless ``skip``; a resample with ``left[s] != 0`` adds nothing (its caller decides it).

    Written without branches so that it vectorises over the resamples: an undefined value adds an exact 0 to
    both sums (neither is ever -0.0, so adding +0.0 leaves them unchanged), and the compensation takes the
    larger and smaller operand by selection, as Neumaier's branches do."""
    b = r.shape[0]
    for s in range(b):
        c = np.float64(counts[j, s]) if has_counts else 1.0
        c = c if left[s] == 0 else 0.0
        x = r[s]
        ok = x == x
        v = c * x if ok else 0.0
        t0 = total[0, s]
        t = t0 + v
        first = abs(t0) >= abs(v)
        big = t0 if first else v
        small = v if first else t0
        total[1, s] += (big - t) + small
        total[0, s] = t
        used[s] += c if (ok or not skip) else 0.0


@jit(error_model="numpy")
def _group_weights(wt, ranks, j, groups, wg):
    """``wg[g, s]``: weight of tie group ``g`` of input ``j`` in resample ``s``."""
    n, b = wt.shape
    for g in range(groups):
        for s in range(b):
            wg[g, s] = 0.0
    for a in range(n):
        g = ranks[j, a]
        for s in range(b):
            wg[g, s] += wt[a, s]


@jit(error_model="numpy")
def _rank_values(wt, ranks, j, groups, wg, v, tot):
    """``v[g + 1, s] = 2 B_g + W_g`` of input ``j`` (``B_g`` the weight below group ``g``); ``tot[s] = sum_g W_g
    v_g^2``."""
    b = wt.shape[1]
    _group_weights(wt, ranks, j, groups, wg)
    for s in range(b):
        v[0, s] = 0.0
        tot[s] = 0.0
    for g in range(groups):
        for s in range(b):
            below = v[0, s]
            value = below + below + wg[g, s]  # 2 B_g + W_g in the arrays' type (exact integers)
            v[0, s] = below + wg[g, s]
            v[g + 1, s] = value
            tot[s] += wg[g, s] * value * value


@jit(error_model="numpy")
def spearman_inputs(wt, ranks, span, weights, work, out):
    """Spearman's r of inputs ``j0 .. j1 - 1`` in every resample, added to the aggregate.

    ``4 S_xz = sum_a w_a V^x_a V^z_a - N^3`` (likewise ``S_xx``, ``S_zz``) in exact integers; ``r`` is
    :func:`metaeval.stats.correlations.coefficients.pearson_r` of them, undefined where a vector is constant."""
    rx, rz, gx, gz = ranks
    j0, j1 = span
    counts, has_counts, skip = weights
    wg, vx, vz, sxx, szz, sxz, rr, left = work
    total, used = out
    n, b = wt.shape
    cube = float(n) ** 3
    for j in range(j0, j1):
        _rank_values(wt, rx, j, gx[j], wg, vx, sxx)
        _rank_values(wt, rz, j, gz[j], wg, vz, szz)
        for s in range(b):
            sxz[s] = 0.0
        for a in range(n):
            ga = rx[j, a] + 1
            gb = rz[j, a] + 1
            for s in range(b):
                sxz[s] += wt[a, s] * vx[ga, s] * vz[gb, s]
        for s in range(b):
            xx = sxx[s] - cube
            zz = szz[s] - cube
            r = ((sxz[s] - cube) / 4.0) / (math.sqrt(xx / 4.0) * math.sqrt(zz / 4.0))
            rr[s] = min(max(r, -1.0), 1.0) if xx > 0 and zz > 0 else np.nan
        _add(total, used, counts, has_counts, skip, j, rr, left)


@jit(error_model="numpy")
def _tied_squares(wt, ranks, j, groups, wg, out):
    """``out[s] = sum_g W_g^2`` of input ``j``."""
    b = wt.shape[1]
    _group_weights(wt, ranks, j, groups, wg)
    for s in range(b):
        out[s] = 0.0
    for g in range(groups):
        for s in range(b):
            out[s] += wg[g, s] * wg[g, s]


@jit(error_model="numpy")
def kendall_inputs(wt, num, ranks, n0, span, weights, work, out):
    """Kendall's tau-b of inputs ``j0 .. j1 - 1`` in every resample, added to the aggregate.

    ``num[j - j0, s]`` is the weighted numerator (exact); the pairs tied in x are ``(sum_g W_g^2 - N) / 2``;
    ``r`` is :func:`metaeval.stats.correlations.coefficients.tau_b`."""
    rx, rz, gx, gz = ranks
    j0, j1 = span
    counts, has_counts, skip = weights
    wg, tx, tz, rr, left = work
    total, used = out
    n, b = wt.shape
    for j in range(j0, j1):
        _tied_squares(wt, rx, j, gx[j], wg, tx)
        _tied_squares(wt, rz, j, gz[j], wg, tz)
        for s in range(b):
            ux = n0 - (tx[s] - n) / 2.0
            uz = n0 - (tz[s] - n) / 2.0
            r = np.float64(num[j - j0, s]) / math.sqrt(ux * uz)
            rr[s] = min(max(r, -1.0), 1.0) if ux > 0 and uz > 0 else np.nan
        _add(total, used, counts, has_counts, skip, j, rr, left)


@jit(error_model="numpy")
def _one_group(chosen, ranks, k, groups, count, cnt, flag, bit):
    """``flag[s] |= bit`` where the two or more chosen systems of resample ``s`` lie in one group of ``ranks[k]``."""
    n, b = chosen.shape
    for g in range(groups):
        for s in range(b):
            cnt[g, s] = 0.0
    for a in range(n):
        g = ranks[k, a]
        for s in range(b):
            cnt[g, s] += chosen[a, s]
    for g in range(groups):
        for s in range(b):
            if count[s] > 1 and cnt[g, s] == count[s]:
                flag[s] |= bit


@jit(error_model="numpy")
def pearson_inputs(wt, picks, centred, span, x_groups, z_groups, weights, work, out, cand):
    """Pearson's r of inputs ``j0 .. j1 - 1`` in every resample, added to the aggregate.

    The weighted moments ``sum_a w_a (x, z, x^2, z^2, x z)`` of the centred scores, then ``r`` by the formula of
    the summary-level Pearson kernel; undefined with one chosen system. Where the chosen systems lie in one group of
    near-equal values of x (``tx[j] >= 0``: the row of ``rx``) or of z, the resample is a candidate: ``(j, s, r,
    flags)`` is written to the ``cand_*`` buffers and left out of the aggregate; the caller decides it (returns
    the number of candidates). ``bx[k]`` / ``bz[k]`` is the size of the largest group of row ``k``: an input whose
    groups are all smaller than the ``fewest`` chosen systems of any resample of the batch is skipped."""
    chosen, count, fewest = picks
    xc, zc = centred
    j0, j1 = span
    tx, rx, gx, bx = x_groups
    tz, rz, gz, bz = z_groups
    counts, has_counts, skip = weights
    mom, cnt, flag, rr = work
    total, used = out
    cand_j, cand_s, cand_r, cand_f = cand
    n, b = wt.shape
    k = 0
    for j in range(j0, j1):
        for q in range(5):
            for s in range(b):
                mom[q, s] = 0.0
        for a in range(n):
            x = xc[j, a]
            z = zc[j, a]
            xx = x * x
            zz = z * z
            xz = x * z
            for s in range(b):
                w = wt[a, s]
                mom[0, s] += w * x
                mom[1, s] += w * z
                mom[2, s] += w * xx
                mom[3, s] += w * zz
                mom[4, s] += w * xz
        any_flag = False
        for s in range(b):
            flag[s] = 0
        if tx[j] >= 0 and bx[tx[j]] >= fewest:
            _one_group(chosen, rx, tx[j], gx[tx[j]], count, cnt, flag, 1)
            any_flag = True
        if tz[j] >= 0 and bz[tz[j]] >= fewest:
            _one_group(chosen, rz, tz[j], gz[tz[j]], count, cnt, flag, 2)
            any_flag = True
        for s in range(b):
            sx = mom[0, s]
            sz = mom[1, s]
            vx = mom[2, s] - sx * sx / n
            vz = mom[3, s] - sz * sz / n
            cov = mom[4, s] - sx * sz / n
            p = vx * vz  # numpy's cov / sqrt(p), clipped: +-1 for p == 0 < |cov|, NaN for 0 / 0 and p < 0
            q = min(max(cov / math.sqrt(p), -1.0), 1.0)
            one = 1.0 if cov > 0 else -1.0
            r = q if p > 0 else (one if p == 0 and cov != 0 else np.nan)
            rr[s] = r if count[s] != 1 else np.nan
        if any_flag:
            for s in range(b):
                if flag[s]:
                    cand_j[k] = j
                    cand_s[k] = s
                    cand_r[k] = rr[s]
                    cand_f[k] = flag[s]
                    k += 1
        _add(total, used, counts, has_counts, skip, j, rr, flag)
    return k
