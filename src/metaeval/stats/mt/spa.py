"""Soft pairwise accuracy (SPA; Thompson et al. 2024, the WMT24 / WMT25 system-level statistic) and its
permutation null between metrics, linear in the number of metrics.

**System p-values.** For systems ``a``, ``b`` with segment scores ``s_a``, ``s_b`` (M segments) and sign
vectors ``signs_r`` (R of them, +-1 per segment, shared by the human and every metric), ``delta = sum_m (s_am
- s_bm)`` and ``delta_r = sum_m signs_rm (s_am - s_bm)``; ``c = #{delta_r >= delta}`` and ``p = c / R``
(mt-metrics-eval ``pce.compute_pairwise_p_values``) or ``(1 + c) / (1 + R)``. Sums, not means: a mean divides
by M and its rounding (about eps |mean|) can hide an exact tie of ``delta_r`` and ``delta``, which is common
for scores on a grid (an LLM judge in steps of 5: most segment differences are 0 or +-5, and many draws hit
``delta`` exactly). A draw counts as a tie when ``|delta_r - delta| <= SPA_RTOL (A_a + A_b)``, ``A_a = sum_m
|s_am|``: a bound on the rounding of the sums relative to their operands (worst case about ``M eps A``,
far below the tolerance), while two sums of grid values that differ in exact arithmetic differ by at least
one grid step, far above it. Integer-valued scores are summed exactly, so the counts equal the exact c / R.

**The null between metrics** (mt-metrics-eval ``PermutationSigDiff`` on 'pce'; PERM-BOTH over cells,
Deutsch, Dror & Roth 2021). Each metric is standardized over its N M cells; a draw is a mask ``m`` of the
cells and metrics i, j give the hybrids ``h_i = x_j + m (x_i - x_j)``, ``h_j = x_i + m (x_j - x_i)``, whose
SPAs are recomputed with the same ``signs``. The sign-flip sums of a hybrid are linear in it::

    H_i[a, r] = sum_s signs_rs h_i,as = S_j[a, r] + Q_i[a, r] - Q_j[a, r],
    S_p[a, r] = sum_s signs_rs x_p,as,    Q_p[a, r] = sum_s signs_rs m_as x_p,as,

(and the totals ``T_i[a] = sum_s h_i,as`` likewise from ``sum_s x_p,as`` and ``sum_s m_as x_p,as``), so one
matrix product per draw gives ``Q_p`` for every metric (cost R M N P per draw) and each metric pair only
combines them. The product runs in float32 (twice the speed of float64; mt-metrics-eval computes SPA in
float32 throughout) on each metric's scores centred on one of its own values, then standardized in float64:
for scores on a grid (integer multiples of a power of two: integers, steps of 0.5) the float32 sums are exact
while below 2^24, and a pair of such metrics keeps the tolerance ``SPA_RTOL``; a pair with a metric of
continuous scores, whose float32 rounding is typically eps32 / sqrt(M) of the operands, takes
``SPA_NULL_RTOL`` = 2^-26 of the operands (the null of such a pair has no exact ties to keep, so this only
decides permuted sums closer to delta than about 1e-8 of their operands). The counts of the pairs (P^2 / 2 x N^2 / 2 x R
per draw) run in a compiled loop when numba is installed, else in numpy; with the compiled loop the batches of
draws run one per core, each in its own thread with its product on one BLAS thread, so that both phases keep
every core busy and no thread pool waits on the other.

References
----------
Thompson, B. et al. (2024). Improving Statistical Significance in Human Evaluation of Automatic Metrics via
Soft Pairwise Accuracy. WMT 2024.
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods. TACL 9.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from metaeval.defaults import MT_SPA_RTOL
from metaeval.stats._runtime import single_blas_thread
from metaeval.stats.kernels import compiler

__all__ = ["SPA_NULL_RTOL", "SPA_RTOL", "spa_from_counts", "spa_null", "sum_pvalues", "system_pvalues"]

SPA_RTOL = MT_SPA_RTOL
SPA_NULL_RTOL = 2.0 ** -26
"""The tie tolerance of the null's sums, which are float32 products (module docstring)."""


def sum_pvalues(null, delta, tol, n, pvalue="randomized"):
    """``p[..., i, j]`` (upper triangle: i better, lower: j better) from the sign-flip sums ``null``
    (..., pairs, R), the observed sums ``delta`` (..., pairs) and the tie tolerance ``tol`` (..., pairs) of
    each system pair (``np.triu_indices(n, 1)`` order)."""
    ia, ib = np.triu_indices(n, 1)
    r = null.shape[-1]
    add = 1 if pvalue == "randomized" else 0
    d, t = delta[..., None], np.asarray(tol)[..., None]
    upper = (add + (null >= d - t).sum(axis=-1)) / (add + r)
    lower = (add + (null <= d + t).sum(axis=-1)) / (add + r)  # j better: -delta_r >= -delta
    out = np.full(delta.shape[:-1] + (n, n), np.nan)
    out[..., ia, ib] = upper
    out[..., ib, ia] = lower
    return out


def system_pvalues(s, signs, pvalue="randomized"):
    """One-sided paired-permutation p-values ``p[..., i, j]`` of "system i scores higher than system j".

    ``s`` (..., N, M) segment scores, ``signs`` (R, M) of +-1 shared by every matrix; sums and the tie
    tolerance of the module docstring; ``pvalue`` ``'fraction'`` (c / R, mt-metrics-eval) or
    ``'randomized'`` ((1 + c) / (1 + R)). ``delta_r`` of every pair is a difference of per-system sums
    ``signs @ s_i`` (one product for all systems)."""
    s = np.asarray(s, dtype=np.float64)
    n, m = s.shape[-2:]
    ia, ib = np.triu_indices(n, 1)
    partial = (s.reshape(-1, m) @ np.asarray(signs, dtype=np.float64).T).reshape(s.shape[:-1] + (-1,))
    totals, mass = s.sum(axis=-1), np.abs(s).sum(axis=-1)
    null = partial[..., ia, :] - partial[..., ib, :]
    delta = totals[..., ia] - totals[..., ib]
    return sum_pvalues(null, delta, SPA_RTOL * (mass[..., ia] + mass[..., ib]), n, pvalue)


def spa_from_counts(counts, r, pz, pvalue):
    """SPA from the upper-triangle counts ``c`` (..., pairs) of R draws and the human's p-values ``pz``."""
    add = 1 if pvalue == "randomized" else 0
    return 1.0 - np.abs((add + counts) / (add + r) - pz).mean(axis=-1)


def _exact_in_float32(v, m):
    """Whether every sum of up to ``m`` of the values ``v`` (and their negatives) is exact in float32: the
    values are integer multiples of one power of two, and ``m`` times the largest multiple is below 2^24."""
    top = float(np.abs(v).max()) if v.size else 0.0
    if top == 0.0:
        return True
    for e in range(-12, 13):
        scaled = v * 2.0 ** e
        if np.array_equal(scaled, np.round(scaled)):
            return top * 2.0 ** e * m < 2.0 ** 24
    return False


def _pair_counts_numpy(si, ti, mass, out, rtol=None):
    """Upper-triangle counts of one hybrid for a batch: ``si`` (B, N, R) sign-flip sums, ``ti`` (B, N)
    totals; ``mass`` (N,) the tolerance operands; ``out`` (B, pairs)."""
    n = si.shape[1]
    ia, ib = np.triu_indices(n, 1)
    null = si[:, ia] - si[:, ib]
    delta = (ti[:, ia] - ti[:, ib])[..., None]
    tol = ((SPA_NULL_RTOL if rtol is None else rtol) * (mass[ia] + mass[ib]))[None, :, None]
    out[:] = (null >= delta - tol).sum(axis=-1)


def _workers():
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def spa_null(xs, z, signs, masks_of, k, pvalue="fraction", batch=16, engine="auto", workers=None):
    """Null draws ``SPA(h_i) - SPA(h_j)`` of every metric pair i < j (``np.triu_indices(P, 1)`` order),
    shape (pairs, k): PERM-BOTH over the N M cells (module docstring), the same ``signs`` (R, M) as the
    observed SPA, ``masks_of(b)`` -> bool (b, N * M) the next ``b`` masks.

    ``engine``: ``'numba'`` (the compiled count loop), ``'numpy'`` or ``'auto'`` (numba when installed).
    Both give the same counts (the masks are drawn ``batch`` draws at a time, in order). ``workers``
    (default: the cores available) batches run at once under the compiled loop, each in its own thread with
    one BLAS thread (the product and the counts of a batch run on one core, the batches on every core); the
    result does not depend on it (each draw's sums and counts are computed alike in any batch)."""
    xs = np.asarray(xs, dtype=np.float64)
    p, n, m = xs.shape
    mu = xs.reshape(p, -1).mean(axis=1)
    sd = xs.reshape(p, -1).std(axis=1)
    sd = np.where(sd > 0, sd, 1.0)
    x = (xs - mu[:, None, None]) / sd[:, None, None]
    # the masked sums in float32 on scores centred on one of their own values (exact for scores on a grid)
    flat = xs.reshape(p, -1)
    centre = np.partition(flat, flat.shape[1] // 2, axis=1)[:, flat.shape[1] // 2]
    xc = (xs - centre[:, None, None]).astype(np.float32)
    exact = np.array([_exact_in_float32(xs[i] - centre[i], m) for i in range(p)])
    shift, scale = (mu - centre) / sd, 1.0 / sd
    signs64 = np.ascontiguousarray(signs, dtype=np.float64)
    signs32 = signs64.T.astype(np.float32)
    r = signs64.shape[0]
    ia, ib = np.triu_indices(n, 1)
    pz = system_pvalues(z, signs64, pvalue)[ia, ib]
    # (P, N, R) sign-flip sums of each metric, C-contiguous whatever the layout of xs (the compiled loop reads rows)
    s = np.ascontiguousarray(np.einsum("rm,pnm->pnr", signs64, x))
    t = x.sum(axis=-1)  # (P, N)
    xt = np.ascontiguousarray(x.transpose(1, 2, 0))  # (N, M, P)
    mass = np.abs(x).sum(axis=-1)  # (P, N): the operands of a hybrid of i and j are bounded by mass_i + mass_j
    qa, qb = np.triu_indices(p, 1)
    rtol = np.where(exact[qa] & exact[qb], SPA_RTOL, SPA_NULL_RTOL)  # per metric pair
    out = np.empty((qa.size, k))
    if not qa.size:
        return out
    if engine == "auto":
        engine = "numba" if compiler.numba_available() else "numpy"
    if engine == "numba":
        from metaeval.stats.mt._compiled import spa_pair_counts
    starts = list(range(0, k, batch))
    lock = threading.Lock()
    drawn = iter(starts)

    def run_batch(buffers):
        with lock:  # the masks in the order of the stream, whichever thread takes them
            lo = next(drawn, None)
            if lo is None:
                return False
            mk = masks_of(min(batch, k - lo)).reshape(-1, n, m)  # (B, N, M)
        b = mk.shape[0]
        m32 = mk.astype(np.float32)
        y = buffers[0][:b]  # (B, P + 1, N, M): the masked cells of every metric, centred, and the mask itself
        np.multiply(m32[:, None], xc[None], out=y[:, :p])
        y[:, p] = m32
        q = buffers[1][:b]  # (B, P + 1, N, R); q[:, P], the masked sums of ones, are exact integers
        np.matmul(y.reshape(-1, m), signs32, out=q.reshape(-1, r))
        u = np.matmul(mk.astype(np.float64).transpose(1, 0, 2), xt).transpose(1, 2, 0)  # (B, P, N) masked totals
        if engine == "numba":
            ci, cj = spa_pair_counts(s, t, q, scale, shift, u, mass, qa.astype(np.int64), qb.astype(np.int64), rtol)
        else:
            ones = q[:, p]
            # the masked sign-flip sums of the standardized scores
            qs = q[:, :p].astype(np.float64) * scale[None, :, None, None] - shift[None, :, None, None] * ones[:, None]
            ci = np.empty((qa.size, b, ia.size))
            cj = np.empty_like(ci)
            for e, (i, j) in enumerate(zip(qa, qb)):
                both = mass[i] + mass[j]
                _pair_counts_numpy(s[j][None] + qs[:, i] - qs[:, j], t[j][None] + u[:, i] - u[:, j], both, ci[e],
                                   rtol[e])
                _pair_counts_numpy(s[i][None] + qs[:, j] - qs[:, i], t[i][None] + u[:, j] - u[:, i], both, cj[e],
                                   rtol[e])
        out[:, lo:lo + b] = spa_from_counts(ci, r, pz, pvalue) - spa_from_counts(cj, r, pz, pvalue)
        return True

    def worker():
        rows = min(batch, k)
        buffers = (np.empty((rows, p + 1, n, m), dtype=np.float32), np.empty((rows, p + 1, n, r), dtype=np.float32))
        while run_batch(buffers):
            pass

    threads = 1 if engine != "numba" else min(_workers() if workers is None else int(workers), len(starts))
    if threads <= 1:
        worker()
        return out
    with single_blas_thread(), ThreadPoolExecutor(threads) as pool:
        for f in [pool.submit(worker) for _ in range(threads)]:
            f.result()
    return out
