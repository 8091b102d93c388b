"""The compiled (numba) count loop of the SPA null (:func:`metaeval.stats.mt.spa.spa_null`).

Imported on first use only (``import metaeval`` never imports numba) and cached on disk by numba
(``cache=True``; the rules of :mod:`metaeval.stats.kernels.compiled`).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["spa_pair_counts"]


def _jit(fn, parallel=False):
    try:
        return numba.njit(cache=True, nogil=True, parallel=parallel, fastmath={"contract", "arcp"})(fn)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True, parallel=parallel)(fn)


@_jit
def _count(v, w, thr, vmax, wmax, vmin, wmin):
    """``#{x : v[x] + w[x] >= thr}``, without reading ``v`` and ``w`` when their bounds decide every
    comparison (``fl(v + w)`` is monotone in both: ``vmax + wmax < thr`` implies that no sum reaches ``thr``,
    ``vmin + wmin >= thr`` that every sum does)."""
    if vmax + wmax < thr:
        return 0
    if vmin + wmin >= thr:
        return v.size
    total = 0
    for x in range(v.size):
        total += v[x] + w[x] >= thr
    return total


def _spa_pair_counts(s, t, q, ones, scale, shift, u, mass, qa, qb, rtol):
    """Upper-triangle counts ``#{H[a, r] - H[b, r] >= T[a] - T[b] - tol_ab}`` of both hybrids of every metric
    pair (qa[e], qb[e]) and draw.

    The hybrid ``h_i`` (metric i on the masked cells, j elsewhere) has the sign-flip sums ``H_i = W_j + V_i``
    and totals ``T_i = (t_j - u_j) + u_i``, with ``V_p = scale_p q[:, p] - shift_p ones`` the masked sums of
    metric p (standardized from the float32 sums of its centred scores) and ``W_p = s_p - V_p`` its unmasked
    sums, both computed once per draw. For a system pair (a, b) the comparison is ``dV_i[r] + dW_j[r] >=
    -tol_ab`` with ``dV_p = V_p[a] - V_p[b] - (u_p[a] - u_p[b])`` and ``dW_p = W_p[a] - W_p[b] - ((t_p -
    u_p)[a] - (t_p - u_p)[b])``: per-metric vectors made once per draw and system pair and shared by every
    metric pair; their bounds over the draws of the sign flips let a pair whose count is 0 or R skip the
    comparisons (:func:`_count`; the counts are exact). ``tol_ab = rtol[e] (mass_i + mass_j)[a] + rtol[e]
    (mass_i + mass_j)[b]``.

    ``s`` (P, N, R), ``t`` (P, N), ``q`` (B, P, N, R) float32, ``ones`` (B, N, R) float32, ``scale`` and
    ``shift`` (P,), ``u`` (B, P, N), ``mass`` (P, N). Returns two float arrays (pairs, B, N (N - 1) / 2).
    The draws and system pairs run in parallel."""
    n_pairs = qa.size
    b_size, p, n, r = q.shape
    sys_pairs = n * (n - 1) // 2
    ci = np.zeros((n_pairs, b_size, sys_pairs))
    cj = np.zeros((n_pairs, b_size, sys_pairs))
    v = np.empty((b_size, p, n, r))
    w = np.empty((b_size, p, n, r))
    for task in numba.prange(b_size * p):
        bb = task // p
        m = task % p
        for a in range(n):
            for x in range(r):
                va = scale[m] * np.float64(q[bb, m, a, x]) - shift[m] * np.float64(ones[bb, a, x])
                v[bb, m, a, x] = va
                w[bb, m, a, x] = s[m, a, x] - va
    pa = np.empty(sys_pairs, dtype=np.int64)
    pb = np.empty(sys_pairs, dtype=np.int64)
    e = 0
    for a in range(n):
        for b in range(a + 1, n):
            pa[e] = a
            pb[e] = b
            e += 1
    for task in numba.prange(b_size * sys_pairs):
        bb = task // sys_pairs
        k = task % sys_pairs
        a = pa[k]
        b = pb[k]
        dv = np.empty((p, r))
        dw = np.empty((p, r))
        vmax = np.empty(p)
        vmin = np.empty(p)
        wmax = np.empty(p)
        wmin = np.empty(p)
        for m in range(p):
            ud = u[bb, m, a] - u[bb, m, b]
            td = (t[m, a] - u[bb, m, a]) - (t[m, b] - u[bb, m, b])
            for x in range(r):
                dv[m, x] = (v[bb, m, a, x] - v[bb, m, b, x]) - ud
                dw[m, x] = (w[bb, m, a, x] - w[bb, m, b, x]) - td
            v_hi = dv[m, 0]
            v_lo = dv[m, 0]
            w_hi = dw[m, 0]
            w_lo = dw[m, 0]
            for x in range(1, r):
                v_hi = max(v_hi, dv[m, x])
                v_lo = min(v_lo, dv[m, x])
                w_hi = max(w_hi, dw[m, x])
                w_lo = min(w_lo, dw[m, x])
            vmax[m] = v_hi
            vmin[m] = v_lo
            wmax[m] = w_hi
            wmin[m] = w_lo
        for e in range(n_pairs):
            i = qa[e]
            j = qb[e]
            thr = -(rtol[e] * (mass[i, a] + mass[j, a]) + rtol[e] * (mass[i, b] + mass[j, b]))
            ci[e, bb, k] = _count(dv[i], dw[j], thr, vmax[i], wmax[j], vmin[i], wmin[j])
            cj[e, bb, k] = _count(dv[j], dw[i], thr, vmax[j], wmax[i], vmin[j], wmin[i])
    return ci, cj


spa_pair_counts = _jit(_spa_pair_counts, parallel=True)
