"""The compiled (numba) count loop of the SPA null (:func:`metaeval.stats.mt.spa.spa_null`).

Imported on first use only (``import metaeval`` never imports numba) and cached on disk by numba
(``cache=True``; :func:`metaeval.stats.kernels.compiler.decorator.jit`, the one decorator of ``stats/``). The loops are serial: the caller runs
one batch of draws per core in its own thread (the loops release the GIL), so no phase waits on another.

Rounding: every operation is an IEEE operation in the order written (no ``fastmath``); the standardized
masked sums are ``fma(scale, q, -(shift * ones))``, rounded once (:func:`fma`, the intrinsic of :mod:`metaeval.stats.kernels.compiler.intrinsics`), as the loop compiled with
contraction computed them before.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit
from metaeval.stats.kernels.compiler.intrinsics import fma as _fma

__all__ = ["fma", "hybrid_sums", "pair_counts", "spa_pair_counts"]


_jit = jit()


@_jit
def fma(a, b, c):
    """``a * b + c`` with one rounding (for the tests: the loops call the intrinsic inline)."""
    return _fma(a, b, c)


@_jit
def hybrid_sums(s, q, scale, shift, i, j, bb, hi, hj):
    """The sign-flip sums of both hybrids of metrics ``i``, ``j`` in draw ``bb``: ``hi[a, x] = s[j, a, x] + dq``
    and ``hj[a, x] = s[i, a, x] - dq``, ``dq = Q_i - Q_j``, ``Q_p = fma(scale_p, q[bb, p], -(shift_p * o))``
    with ``o = q[bb, P]`` (the masked sums of ones)."""
    n, r = hi.shape
    last = q.shape[1] - 1
    si, sj, ci, cj = scale[i], scale[j], shift[i], shift[j]
    for a in range(n):
        qi, qj, qo = q[bb, i, a], q[bb, j, a], q[bb, last, a]
        sa, sb, ha, ga = s[j, a], s[i, a], hi[a], hj[a]
        for x in range(r):
            o = np.float64(qo[x])
            dq = _fma(si, np.float64(qi[x]), -(ci * o)) - _fma(sj, np.float64(qj[x]), -(cj * o))
            ha[x] = sa[x] + dq
            ga[x] = sb[x] - dq


@_jit
def pair_counts(h, d, out):
    """``out[w] = #{x: h[a, x] - h[b, x] >= d[w]}`` over the system pairs ``a < b`` (``w`` their index in
    ``np.triu_indices(n, 1)`` order); two pairs of one row ``a`` per pass over its sums."""
    n, r = h.shape
    w = 0
    for a in range(n):
        ha = h[a]
        b = a + 1
        while b + 1 < n:
            h1, h2 = h[b], h[b + 1]
            d1, d2 = d[w], d[w + 1]
            c1 = 0
            c2 = 0
            for x in range(r):
                v = ha[x]
                c1 += v - h1[x] >= d1
                c2 += v - h2[x] >= d2
            out[w] = c1
            out[w + 1] = c2
            b += 2
            w += 2
        if b < n:
            h1, d1 = h[b], d[w]
            c1 = 0
            for x in range(r):
                c1 += ha[x] - h1[x] >= d1
            out[w] = c1
            w += 1


@_jit
def spa_pair_counts(s, t, q, scale, shift, u, mass, qa, qb, rtol):
    """Upper-triangle counts ``#{H[a, r] - H[b, r] >= T[a] - T[b] - tol_ab}`` of both hybrids of every metric
    pair (qa[e], qb[e]) and draw: ``H_i = s[j] + Q_i - Q_j``, ``T_i = t[j] + u[:, i] - u[:, j]`` and
    ``H_j``, ``T_j`` with i and j exchanged (:func:`hybrid_sums`); ``tol_ab = tol_a + tol_b``, ``tol_a =
    rtol[e] (mass_i + mass_j)[a]``.

    ``s`` (P, N, R), ``t`` (P, N), ``q`` (B, P + 1, N, R) float32 (the last metric: the masked sums of ones),
    ``scale`` and ``shift`` (P,), ``u`` (B, P, N), ``mass`` (P, N). Returns two float arrays (pairs, B,
    N (N - 1) / 2)."""
    n_pairs = qa.size
    b_size, _, n, r = q.shape
    sys_pairs = n * (n - 1) // 2
    ci = np.zeros((n_pairs, b_size, sys_pairs))
    cj = np.zeros((n_pairs, b_size, sys_pairs))
    hi = np.empty((n, r))
    hj = np.empty((n, r))
    ti = np.empty(n)
    tj = np.empty(n)
    tol = np.empty(n)
    di = np.empty(sys_pairs)
    dj = np.empty(sys_pairs)
    for e in range(n_pairs):
        i, j = qa[e], qb[e]
        for a in range(n):
            tol[a] = rtol[e] * (mass[i, a] + mass[j, a])
        for bb in range(b_size):
            for a in range(n):
                ti[a] = t[j, a] + u[bb, i, a] - u[bb, j, a]
                tj[a] = t[i, a] + u[bb, j, a] - u[bb, i, a]
            w = 0
            for a in range(n):
                for b in range(a + 1, n):
                    tab = tol[a] + tol[b]
                    di[w] = ti[a] - ti[b] - tab
                    dj[w] = tj[a] - tj[b] - tab
                    w += 1
            hybrid_sums(s, q, scale, shift, i, j, bb, hi, hj)
            pair_counts(hi, di, ci[e, bb])
            pair_counts(hj, dj, cj[e, bb])
    return ci, cj
