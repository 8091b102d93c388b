"""The compiled (numba) count loop of the SPA null (:func:`metaeval.stats.mt.spa.spa_null`).

Imported on first use only (``import metaeval`` never imports numba) and cached on disk by numba
(``cache=True``; the rules of :mod:`metaeval.stats.kernels.compiled`).
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["spa_pair_counts"]


def _jit(fn):
    try:
        return numba.njit(cache=True, nogil=True, parallel=True, fastmath={"contract", "arcp"})(fn)
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True, parallel=True)(fn)


@_jit
def spa_pair_counts(s, t, q, ones, scale, shift, u, mass, qa, qb, rtol):
    """Upper-triangle counts ``#{H[a, r] - H[b, r] >= T[a] - T[b] - tol_ab}`` of both hybrids of every metric
    pair (qa[e], qb[e]) and draw: ``H_i = s[j] + Q_i - Q_j``, ``T_i = t[j] + u[:, i] - u[:, j]`` and
    ``H_j``, ``T_j`` with i and j exchanged, where ``Q_p = scale_p q[:, p] - shift_p ones`` (the float32 sums of
    the centred scores standardized); ``tol_ab = rtol[e] (mass_i + mass_j)[a] + ...[b]``.

    ``s`` (P, N, R), ``t`` (P, N), ``q`` (B, P, N, R) float32, ``ones`` (B, N, R) float32, ``scale`` and
    ``shift`` (P,), ``u`` (B, P, N), ``mass`` (P, N). Returns two float arrays (pairs, B, N (N - 1) / 2). The
    metric pairs run in parallel (``numba.prange``)."""
    n_pairs = qa.size
    b_size, _, n, r = q.shape
    sys_pairs = n * (n - 1) // 2
    ci = np.zeros((n_pairs, b_size, sys_pairs))
    cj = np.zeros((n_pairs, b_size, sys_pairs))
    for e in numba.prange(n_pairs):
        hi = np.empty((n, r))
        hj = np.empty((n, r))
        ti = np.empty(n)
        tj = np.empty(n)
        tol = np.empty(n)
        i, j = qa[e], qb[e]
        for a in range(n):
            tol[a] = rtol[e] * (mass[i, a] + mass[j, a])
        for bb in range(b_size):
            for a in range(n):
                ti[a] = t[j, a] + u[bb, i, a] - u[bb, j, a]
                tj[a] = t[i, a] + u[bb, j, a] - u[bb, i, a]
                for x in range(r):
                    o = np.float64(ones[bb, a, x])
                    dq = (scale[i] * np.float64(q[bb, i, a, x]) - shift[i] * o) - (
                        scale[j] * np.float64(q[bb, j, a, x]) - shift[j] * o)
                    hi[a, x] = s[j, a, x] + dq
                    hj[a, x] = s[i, a, x] - dq
            w = 0
            for a in range(n):
                for b in range(a + 1, n):
                    tab = tol[a] + tol[b]
                    di = ti[a] - ti[b] - tab
                    dj = tj[a] - tj[b] - tab
                    c1 = 0
                    c2 = 0
                    hia, hib, hja, hjb = hi[a], hi[b], hj[a], hj[b]
                    for x in range(r):
                        c1 += hia[x] - hib[x] >= di
                    for x in range(r):
                        c2 += hja[x] - hjb[x] >= dj
                    ci[e, bb, w] = c1
                    cj[e, bb, w] = c2
                    w += 1
    return ci, cj
