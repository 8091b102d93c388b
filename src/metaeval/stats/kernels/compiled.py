"""The compiled (numba) loops of the kernels, defined at module level and cached on disk.

Every function here is compiled by numba with ``cache=True``: the machine code is written to disk the first
time a function is called with a given signature, and loaded by every later process, so the few seconds of
compilation are paid once per installation (and again only when this file changes or numba is upgraded),
not once per process. The caller modules (:mod:`~metaeval.stats.kernels.global_pairs`,
:mod:`~metaeval.stats.kernels.dominance`, :mod:`~metaeval.stats.kernels.summary_pearson`,
:mod:`~metaeval.stats.kernels.calibration`) import this module
lazily, on the first call that needs a compiled loop: ``import metaeval`` never imports numba.

Where the cache lives (numba's own rules, which metaeval does not override):

1. ``$NUMBA_CACHE_DIR`` when the user sets it;
2. otherwise ``__pycache__`` next to this file when that directory is writable (an installation in a
   user's virtualenv: compiled once per installation);
3. otherwise (a read-only site-packages) numba's user-wide cache directory, ``$XDG_CACHE_HOME/numba`` or
   ``~/.cache/numba``, in a subdirectory named after this file's directory;
4. when no location is writable the loops are compiled without a cache, once per process (:func:`jit`).

The cache is keyed by this file's modification time and size, the function's signature and the CPU, so a
stale entry is never used.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "boot_subtract_copies",
    "boot_weighted_counts",
    "cross_sign_sums",
    "global_bootstrap_counts",
    "integer_curve_maxima",
    "jit",
    "pair_terms",
    "pearson_accumulate",
    "pearson_accumulate_skip",
    "permuted_constant",
    "risky_pearson_rows",
    "signed_sums",
    "summary_pearson_sums",
]


def jit(parallel: bool = False, error_model: str = "python", inline: str = "never"):
    """``numba.njit`` with ``cache=True`` (``nogil``); without a writable cache location, ``cache=False``.

    ``inline="always"`` inlines the function into its compiled callers (numba IR): for a helper called from a
    hot loop, where a call would cost its arguments' unpacking and keep LLVM from optimising across it."""

    def wrap(fn):
        options = dict(nogil=True, parallel=parallel, error_model=error_model, inline=inline)
        try:
            return numba.njit(cache=True, **options)(fn)
        except RuntimeError:  # numba: "cannot cache function ...: no locator available"
            return numba.njit(cache=False, **options)(fn)

    return wrap


# ---- global level under the bootstrap (global_pairs.py) ----------------------------------------
@jit()
def boot_weighted_counts(rx, rz, wt, tree, zsum, zsq, out):
    """Add to ``out`` n, the doubled counts (2P, 2S, 2Tx, 2Tz, 2Txz), distinct x and distinct z of the
    cells with metric ranks ``rx``, human ranks ``rz`` (sorted by (rx, rz)) and weights ``wt``;
    ``tree``, ``zsum``, ``zsq`` are zero on entry and on exit."""
    size = tree.shape[0]
    length = rx.shape[0]
    tot = 0
    sq = 0
    s = 0
    tx = 0
    txz = 0
    dx = 0
    i = 0
    while i < length:
        j = i
        gsum = 0
        gsq = 0
        while j < length and rx[j] == rx[i]:
            v = wt[j]
            if v > 0:
                r = rz[j] + 1  # 1-based rank in the tree
                below = 0  # weight visited with a smaller human rank
                k = r - 1
                while k > 0:
                    below += tree[k]
                    k -= k & (-k)
                upto = below + zsum[r - 1]  # ... with a smaller or equal human rank
                s += v * (below - (tot - upto))
                gsum += v
                gsq += v * v
            j += 1
        if gsum > 0:
            dx += 1
        tx += gsum * gsum - gsq
        # joint groups: runs of equal rz within the x group
        t = i
        while t < j:
            u = t
            jsum = 0
            jsq = 0
            while u < j and rz[u] == rz[t]:
                v = wt[u]
                jsum += v
                jsq += v * v
                u += 1
            txz += jsum * jsum - jsq
            t = u
        for t in range(i, j):
            v = wt[t]
            if v > 0:
                k = rz[t] + 1
                while k < size:
                    tree[k] += v
                    k += k & (-k)
                tot += v
                sq += v * v
                zsum[rz[t]] += v
                zsq[rz[t]] += v * v
        i = j
    tz = 0
    dz = 0
    for t in range(length):  # human ties, then reset the work arrays
        v = wt[t]
        if v > 0:
            r = rz[t]
            if zsum[r] > 0:
                tz += zsum[r] * zsum[r] - zsq[r]
                dz += 1
                zsum[r] = 0
                zsq[r] = 0
            k = r + 1
            while k < size:
                tree[k] -= v
                k += k & (-k)
    out[0] += tot
    out[1] += tot * tot - sq
    out[2] += 2 * s
    out[3] += tx
    out[4] += tz
    out[5] += txz
    out[6] += dx
    out[7] += dz

@jit()
def boot_subtract_copies(full, mult, other, index, rx, rz, tree, zsum, zsq, part, weights):
    """Remove from ``full`` the pairs between different copies of each unit of one axis: a unit drawn
    ``mult[u]`` times holds ``mult[u]^2 - mult[u]`` ordered copy pairs of its line's counts."""
    for u in range(mult.shape[0]):
        extra = mult[u] * mult[u] - mult[u]
        if extra > 0:
            for t in range(weights.shape[0]):
                weights[t] = other[index[u, t]]
            part[:] = 0
            boot_weighted_counts(rx[u], rz[u], weights, tree, zsum, zsq, part)
            for f in range(1, 6):
                full[f] -= extra * part[f]

@jit(parallel=True)
def global_bootstrap_counts(gx, gz, ga, gb, rx_rows, rz_rows, b_rows, rx_cols, rz_cols, a_cols, nz, w, c):
    k = w.shape[0]
    n = w.shape[1]
    m = c.shape[1]
    res = np.zeros((k, 8), dtype=np.int64)
    for s in numba.prange(k):
        tree = np.zeros(nz + 1, dtype=np.int64)
        zsum = np.zeros(nz, dtype=np.int64)
        zsq = np.zeros(nz, dtype=np.int64)
        wt = np.empty(gx.shape[0], dtype=np.int64)
        for t in range(gx.shape[0]):
            wt[t] = w[s, ga[t]] * c[s, gb[t]]
        full = np.zeros(8, dtype=np.int64)
        boot_weighted_counts(gx, gz, wt, tree, zsum, zsq, full)
        part = np.zeros(8, dtype=np.int64)
        boot_subtract_copies(full, w[s], c[s], b_rows, rx_rows, rz_rows, tree, zsum, zsq, part,
                        np.empty(m, dtype=np.int64))
        boot_subtract_copies(full, c[s], w[s], a_cols, rx_cols, rz_cols, tree, zsum, zsq, part,
                        np.empty(n, dtype=np.int64))
        res[s, 0] = full[0]
        for f in range(1, 6):
            res[s, f] = full[f] // 2
        res[s, 6] = full[6]
        res[s, 7] = full[7]
    return res


# ---- pair terms from dominance counts (dominance.py) -------------------------------------------
@jit()
def signed_sums(qv, qorder, dv, dorder, key, less, greater, spearman, tree, out):
    """``out[c] = sum_d t_cd sgn(qv[c] - dv[d])`` (``qorder`` / ``dorder`` sort ``qv`` / ``dv``);
    ``t_cd = key_c - key_d`` (Spearman) or ``sgn`` of the dense human ranks ``key``; ``tree`` is a zero
    Fenwick array of size ``max(key) + 2`` (Kendall), zero again on exit."""
    n = qv.shape[0]
    size = tree.shape[0]
    k = 0
    inserted = 0
    lo_key = 0
    total_key = 0
    if spearman:
        for d in range(n):
            total_key += key[d]
    for qi in range(n):
        c = qorder[qi]
        v = qv[c]
        while k < n and dv[dorder[k]] < v:
            d = dorder[k]
            if spearman:
                lo_key += key[d]
            else:
                r = key[d] + 1
                while r < size:
                    tree[r] += 1
                    r += r & (-r)
            inserted += 1
            k += 1
        if spearman:
            out[c] = key[c] * (2 * inserted - n) - (2 * lo_key - total_key)
        else:
            below = 0  # visited cells with a smaller human rank
            r = key[c]
            while r > 0:
                below += tree[r]
                r -= r & (-r)
            upto = 0  # ... with a smaller or equal human rank
            r = key[c] + 1
            while r > 0:
                upto += tree[r]
                r -= r & (-r)
            out[c] = 2 * (below - (inserted - upto)) + greater[c] - less[c]
    if not spearman:
        tree[:] = 0

@jit(parallel=True)
def pair_terms(values, orders, first, second, self_terms, key, less, greater, spearman, nz, out):
    """``out[q] = T(X_j; X_i) - T(X_i; X_j) - K_i + K_j`` for the pairs ``(first[q], second[q])``."""
    n = values.shape[1]
    for q in numba.prange(first.shape[0]):
        i = first[q]
        j = second[q]
        tree = np.zeros(nz + 2, dtype=np.int64)
        tmp = np.empty(n, dtype=np.int64)
        signed_sums(values[j], orders[j], values[i], orders[i], key, less, greater, spearman, tree, tmp)
        for c in range(n):
            out[q, c] = tmp[c] - self_terms[i, c] + self_terms[j, c]
        signed_sums(values[i], orders[i], values[j], orders[j], key, less, greater, spearman, tree, tmp)
        for c in range(n):
            out[q, c] -= tmp[c]


# ---- summary-level pairs without metric ties (shared.py) ---------------------------------------
@jit(parallel=True)
def cross_sign_sums(x, t, first, second, out):
    """``out[q, a, b] = sum_c t[a, c, b] s_ac - sum_c t[c, a, b] s_ca`` with ``s_ac = sgn(X_j[a, b] - X_i[c, b])``
    for the pairs ``(i, j) = (first[q], second[q])`` of ``x`` (P, N, M) and the integer weights ``t`` (N, N, M)
    of every input ``b`` (the same integers as :meth:`metaeval.stats.kernels.shared.SummaryPairsShared.
    _cross_terms`). The inputs are the last axis, so the loops over them are vector loops; both sums are kept
    in int32 (``N <= 32`` terms of ``|t| <= 2 (N - 1)``)."""
    n = x.shape[1]
    m = x.shape[2]
    for q in numba.prange(first.size):
        xi = x[first[q]]
        xj = x[second[q]]
        own = np.zeros(m, dtype=np.int32)  # sum_c t_ac s_ac of the current a
        other = np.zeros((n, m), dtype=np.int32)  # sum_a t_ac s_ac of every c
        o = out[q]
        for a in range(n):
            xa = xj[a]
            own[:] = 0
            for c in range(n):
                xc = xi[c]
                tac = t[a, c]
                oc = other[c]
                for b in range(m):
                    v = np.int32(tac[b]) * (np.int32(xa[b] > xc[b]) - np.int32(xa[b] < xc[b]))
                    own[b] += v
                    oc[b] += v
            oa = o[a]
            for b in range(m):
                oa[b] = own[b]
        for a in range(n):
            oa = o[a]
            na = other[a]
            for b in range(m):
                oa[b] -= na[b]


# ---- item-grouped Pearson of every pair (summary_pearson.py) ----------------------------------
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


@jit(parallel=True)
def summary_pearson_sums(bits, lin, base, z_const, skip, any_skip, n, block):
    """bits (M, N, b) uint8, lin (M, N, 3, P), base (M, 3, P), skip (M, P, P) uint8 and its ``any`` over the
    last axis ``any_skip`` (M, P) -> T (b, P, P):
    T[s, i, j] = sum over the inputs ``b`` with ``skip[b, i, j] == 0`` of r(X') for the pair (i, j),
    X' = X_i + m (X_j - X_i); r(Y') of the pair is T[s, j, i] (``skip[b, j, i]``)."""
    m, n_sys, b = bits.shape
    p = lin.shape[3]
    total = np.zeros((b, p, p))
    n_blocks = (b + block - 1) // block
    for blk in numba.prange(n_blocks):
        acc = np.empty((3, p))
        own = np.empty((3, p))
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
    return total


# ---- tie calibration (calibration.py) ----------------------------------------------------------
@jit()
def integer_curve_maxima(rs, v0, dv, last, lead, counts, value, index):
    for b in range(counts.shape[0]):
        c = counts[b]
        base = 0
        for p in range(rs.shape[0]):
            base += c[rs[p]] * v0[p]
        run = base
        best = base
        best_at = 0
        seen = lead
        at = 1 if lead else 0
        for p in range(rs.shape[0]):
            run += c[rs[p]] * dv[p]
            if last[p]:
                if not seen or run > best:
                    best, best_at, seen = run, at, True
                at += 1
        value[b] = best
        index[b] = best_at


@jit(parallel=True, error_model="numpy")
def risky_pearson_rows(mask, keep, take, vkeep, vtake, n, noise, r, bad):
    """Pearson's r and Pearson's constancy of the permuted inputs of one pair, per resample and input:
    ``mask`` (b, N, c) bool, ``keep``/``take`` (N, c, 3) the terms of the kept and swapped-in metric, ``vkeep``/
    ``vtake`` (N, c) their values; writes ``r`` (b, c) (0 where constant) and ``bad`` (b, c). The sums run over
    the systems in order, as numpy's reduction along that axis; the rest is numpy's element-wise arithmetic
    (``clip``; ``max - min > noise max(|max|, |min|)``), so the values equal the numpy path's to the bit."""
    b, ns, c = mask.shape
    for s in numba.prange(b):
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


@jit(parallel=True)
def permuted_constant(mask, vkeep, vtake, noise, out):
    """``out[s, c] |=`` whether the permuted input ``c`` of resample ``s`` (``vtake`` where ``mask`` (b, N, c),
    else ``vkeep``, both (N, c)) is constant for Pearson's r: ``max - min <= noise max(|max|, |min|)``, the
    rule of :func:`metaeval.stats.correlations.ties.is_constant` on complete data. A spread above twice the
    bound stays above the bound whatever values follow (widening ``[min, max]`` by ``v`` adds at least
    ``noise |v|`` of spread for each unit of magnitude it adds), so the scan of an input stops there."""
    b, ns, c = mask.shape
    for s in numba.prange(b):
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
