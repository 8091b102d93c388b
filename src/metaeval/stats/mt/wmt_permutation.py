"""Permutation tests between metrics on the tasks of the WMT metrics task, as mt-metrics-eval runs them.

mt-metrics-eval (``stats.PermutationSigDiff``, ``stats.PairwisePermutationSigDiff``; WMT22-24) compares two
metrics i < j on a task by exchanging their scores. With the scores of each metric standardized over the
task's units (systems at system level, cells at segment level), a draw r is a mask m_r of independent fair
bits, one per unit, and the hybrids

    h_i = m_r x_i + (1 - m_r) x_j,    h_j = (1 - m_r) x_i + m_r x_j

exchange the two metrics' scores on the units with m = 0. The null draw of the pair is
``null_r = stat(h_i) - stat(h_j)`` (at m = 1 the observed delta). For acc23 / tau23 the units are the pairs
of the level and what is exchanged is each pair's comparison result. Every function returns the null draws
of every pair i < j (``np.triu_indices(P, 1)`` order) as an array (pairs, k); the masks are drawn once per
task and shared by every pair (mt-metrics-eval draws them anew for each pair: each pair's null distribution
is the same, only the dependence between pairs differs). Pure numpy.

References: Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation
Metrics using Resampling Methods. TACL 9 (PERM-BOTH). Freitag, M. et al. (2023). Results of WMT23 Metrics
Shared Task. Deutsch, D., Foster, G. and Freitag, M. (2023). Ties Matter. EMNLP 2023.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.ties import TIE_RTOL, are_tied

__all__ = ["hybrid_null", "pair_pvalues", "pair_values", "pair_values_null", "pearson_null", "random_bits",
           "random_words", "system_accuracy_null", "system_null", "zscore"]

def zscore(x, axis=-1):
    """``(x - mean) / sd`` along ``axis`` with the population sd (``scipy.stats.zscore``); a constant row is
    only centred (its sd taken as 1)."""
    x = np.asarray(x, dtype=np.float64)
    mu = x.mean(axis=axis, keepdims=True)
    sd = x.std(axis=axis, keepdims=True)
    return (x - mu) / np.where(sd > 0, sd, 1.0)


def random_bits(rng, k, n):
    """``(k, n)`` independent fair bits (bool) from the generator ``rng`` (8 bits per random byte)."""
    raw = rng.integers(0, 256, size=(k, (n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw, axis=1, count=n).view(bool)


def _pairs(p):
    return np.triu_indices(p, 1)


def system_null(xbar, zbar, masks, statistic, batch=64):
    """Null draws of a system-level task: the N (or, pooled over language pairs, the sum of the N_l) system
    scores of every metric are standardized over all of them and swapped system by system.

    Parameters
    ----------
    xbar : ndarray (P, N)
        Metric system scores (language pairs concatenated when pooled); ``zbar`` (N,) the human's.
    masks : ndarray of bool (k, N)
    statistic : callable
        ``statistic(h (B, N), zbar) -> (B,)`` (pooled: it splits the language pairs itself).
    """
    std = zscore(xbar, axis=-1)
    ia, ib = _pairs(std.shape[0])
    k, n = masks.shape
    out = np.empty((ia.size, k))
    for lo in range(0, ia.size, batch):
        a, b = std[ia[lo:lo + batch], None, :], std[ib[lo:lo + batch], None, :]
        hi = np.where(masks[None], a, b)
        hj = np.where(masks[None], b, a)
        both = np.concatenate([hi, hj]).reshape(-1, n)
        vals = statistic(both, zbar).reshape(2, -1, k)
        out[lo:lo + batch] = vals[0] - vals[1]
    return out


def pearson_null(xs, z, masks_of, k, batch=100):
    """Null draws of Pearson over Q units (system level: the N system scores; no grouping: every cell a
    point, PERM-BOTH over cells): the scores of each metric are standardized over the units. The sums of a hybrid are linear in the mask, so with ``A = m . x_p``, ``B = m . x_p^2``,
    ``C = m . (x_p z)`` (one product for all metrics) ``sum h_i = S_j + A_i - A_j``, ``sum h_i^2 = SS_j + B_i -
    B_j``, ``sum h_i z = T_j + C_i - C_j`` and Pearson follows from the sums.

    ``xs`` (P, Q) units, ``z`` (Q,), ``masks_of(b)`` -> bool (b, Q) the next ``b`` masks."""
    x = zscore(xs, axis=-1)
    p, q = x.shape
    feats = np.concatenate([x, x * x, x * z[None]]).T  # (Q, 3P)
    s, ss, t = x.sum(axis=1), (x * x).sum(axis=1), x @ z
    sz, szz = z.sum(), (z * z).sum()
    ia, ib = _pairs(p)
    out = np.empty((ia.size, k))

    def pearson(sh, shh, shz):
        num = q * shz - sh * sz
        den = np.sqrt(np.maximum(q * shh - sh * sh, 0.0) * (q * szz - sz * sz))
        with np.errstate(invalid="ignore", divide="ignore"):
            return num / den

    for lo in range(0, k, batch):
        m = masks_of(min(batch, k - lo)).astype(np.float64)
        prod = m @ feats  # (b, 3P)
        a, bb, c = prod[:, :p], prod[:, p:2 * p], prod[:, 2 * p:]
        ri = pearson(s[ib] + a[:, ia] - a[:, ib], ss[ib] + bb[:, ia] - bb[:, ib], t[ib] + c[:, ia] - c[:, ib])
        rj = pearson(s[ia] + a[:, ib] - a[:, ia], ss[ia] + bb[:, ib] - bb[:, ia], t[ia] + c[:, ib] - c[:, ia])
        out[:, lo:lo + m.shape[0]] = (ri - rj).T
    return out


def pair_values(x, z, level, coefficient, threshold, rtol=TIE_RTOL):
    """Per pair of the level, the value of acc-eq (1 if the metric and the human agree - both tie or both
    order the pair alike -, else 0) or tau-eq (+1 / -1) with the metric's tie ``threshold``, and each pair's
    weight ``1 / (G P_g)``, so that the statistic is ``sum weight * value`` (Deutsch, Foster & Freitag 2023).

    Complete matrices; the metric ties a pair when its gap ``|x_a - x_b| <= threshold`` (mt-metrics-eval's
    rule) or when the two scores are tied under the tie rule of :mod:`metaeval.stats.correlations.ties` (relative
    tolerance ``rtol``)."""
    from metaeval.stats.mt.tie_calibration import group_vectors

    xg, zg = group_vectors(x, z, level)
    g, n = xg.shape
    ia, ib = np.triu_indices(n, 1)
    xa, xb, za, zb = xg[:, ia], xg[:, ib], zg[:, ia], zg[:, ib]
    metric_tied = are_tied(xa, xb, rtol=rtol) | (np.abs(xa - xb) <= threshold)
    human_tied = are_tied(za, zb, rtol=rtol)
    concordant = (np.sign(xa - xb) * np.sign(za - zb) > 0) & ~human_tied
    agree = np.where(metric_tied, human_tied, concordant).ravel()
    values = agree.astype(np.float64) if coefficient == "acc-eq" else np.where(agree, 1.0, -1.0)
    return values, np.full(values.size, 1.0 / (g * ia.size))


def random_words(rng, k, n):
    """``(k, ceil(n / 64))`` uint64 words of independent fair bits (bit ``u % 64`` of word ``u // 64`` is unit
    ``u``; the bits past ``n`` are zero)."""
    words = (n + 63) // 64
    out = rng.integers(0, np.iinfo(np.uint64).max, size=(k, words), dtype=np.uint64, endpoint=True)
    if n % 64:
        out[:, -1] &= np.uint64((1 << (n % 64)) - 1)
    return out


def _unpack_words(words, n):
    """Bool ``(k, n)`` masks of :func:`random_words`."""
    as_bytes = np.ascontiguousarray(words).view(np.uint8).reshape(words.shape[0], -1)  # little-endian words
    return np.unpackbits(as_bytes, axis=1, count=n, bitorder="little").view(bool)


def pair_values_null(values, weights, rng, k, batch=50, engine="auto"):
    """Null draws of mt-metrics-eval's pairwise permutation test (``PairwisePermutationSigDiff``, WMT23's test
    for acc23): each *pair* of the level takes its comparison result from one metric or the other (a fair
    coin per pair), so ``null_r = sum_q w_q s_rq (v_iq - v_jq)`` with ``s = 2m - 1``: a difference of per-metric
    sums ``U = s . (w v)``, linear in the number of metrics. Pairs on which every metric has the same value add
    nothing to any difference and are left out.

    With one weight for every pair (complete data) and values in {0, 1} (acc-eq) or {-1, 1} (tau-eq), ``U`` is
    a count of bits: with ``b = [v > 0]``, ``m . b = popcount(m & b)`` on 64-bit words (``engine='bits'``,
    numpy >= 2); otherwise a float matrix product of the unpacked masks (``engine='matmul'``, the reference
    path; exact in float32 for such integers). Both paths read the same random words.

    ``values`` (P, Q), ``weights`` (Q,), ``rng`` a numpy Generator."""
    varies = (values != values[:1]).any(axis=0)
    values, weights = values[:, varies], weights[varies]
    p, q = values.shape
    ia, ib = _pairs(p)
    out = np.zeros((ia.size, k))
    if q == 0:
        return out
    uniform = bool(np.all(weights == weights[0]))
    binary = bool(np.isin(values, (0.0, 1.0)).all() or np.isin(values, (-1.0, 1.0)).all())
    if engine == "auto":
        engine = "bits" if uniform and binary and hasattr(np, "bitwise_count") else "matmul"
    if engine == "bits":
        ones = values > 0
        plus_minus = bool((values < 0).any())
        packed = np.zeros((p, (q + 63) // 64 * 8), dtype=np.uint8)
        packed[:, :(q + 7) // 8] = np.packbits(ones, axis=1, bitorder="little")
        packed = packed.view(np.uint64)  # (P, words)
        n_ones = ones.sum(axis=1).astype(np.float64)
        for lo in range(0, k, batch):
            m = random_words(rng, min(batch, k - lo), q)
            both = np.bitwise_count(m[:, None, :] & packed[None]).sum(axis=-1, dtype=np.int64)  # (b, P) m . b
            sb = 2.0 * both - n_ones  # s . b
            if plus_minus:  # v = 2 b - 1: s . v = 2 s . b - sum(s)
                sb = 2.0 * sb - (2.0 * np.bitwise_count(m).sum(axis=-1, dtype=np.int64) - q)[:, None]
            u = sb * weights[0]
            out[:, lo:lo + m.shape[0]] = (u[:, ia] - u[:, ib]).T
        return out
    wv = values if uniform else values * weights[None]
    dtype = np.float32 if uniform and q < 2 ** 24 else np.float64
    wv = np.ascontiguousarray(wv.T, dtype=dtype)
    total = wv.sum(axis=0, dtype=np.float64)
    for lo in range(0, k, batch):
        m = _unpack_words(random_words(rng, min(batch, k - lo), q), q)
        u = 2 * (m.astype(dtype) @ wv).astype(np.float64) - total
        if uniform:
            u *= weights[0]
        out[:, lo:lo + m.shape[0]] = (u[:, ia] - u[:, ib]).T
    return out


def hybrid_null(xs, z, masks_of, k, statistic, batch=8):
    """Null draws of any segment-level task by PERM-BOTH over cells (the reference path): the scores of every
    metric are standardized over all N M cells, and for each pair and draw the two hybrids are scored by
    ``statistic(h (B, N, M), z) -> (B,)``. Cost: pairs x k evaluations of the statistic.

    ``masks_of(b)`` -> bool (b, N * M)."""
    p, n, m = xs.shape
    x = zscore(xs.reshape(p, -1), axis=-1).reshape(p, n, m)
    ia, ib = _pairs(p)
    out = np.empty((ia.size, k))
    for lo in range(0, k, batch):
        masks = masks_of(min(batch, k - lo)).reshape(-1, n, m)
        b = masks.shape[0]
        for t, (i, j) in enumerate(zip(ia, ib)):
            hi = np.where(masks, x[i], x[j])
            hj = np.where(masks, x[j], x[i])
            vals = statistic(np.concatenate([hi, hj]), z)
            out[t, lo:lo + b] = vals[:b] - vals[b:]
    return out


def pair_pvalues(null, statistics, pvalue="fraction"):
    """``(P, P)`` one-sided p-values of "row metric's statistic beats the column metric's" from the null draws
    (pairs i < j, k) of ``stat_i - stat_j``: ``c = #{null >= delta}`` (tolerance ``100 eps |delta|``) and
    ``p = c / k`` (``'fraction'``, mt-metrics-eval) or ``(1 + c) / (1 + k)`` (``'randomized'``); the lower
    triangle uses ``-null`` and ``-delta``. NaN where a statistic or every draw is undefined."""
    stats = np.asarray(statistics, dtype=np.float64)
    p = stats.size
    ia, ib = _pairs(p)
    out = np.full((p, p), np.nan)
    if not ia.size:
        return out
    delta = stats[ia] - stats[ib]
    finite = np.isfinite(null)
    used = finite.sum(axis=1)
    tol = 100 * np.finfo(float).eps * np.abs(delta)[:, None]
    with np.errstate(invalid="ignore"):
        up = (finite & (null >= delta[:, None] - tol)).sum(axis=1)
        down = (finite & (null <= delta[:, None] + tol)).sum(axis=1)
    add = 1 if pvalue == "randomized" else 0
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.where((used > 0) & np.isfinite(delta), (add + up) / (add + used), np.nan)
        lower = np.where((used > 0) & np.isfinite(delta), (add + down) / (add + used), np.nan)
    out[ia, ib] = upper
    out[ib, ia] = lower
    return out


def system_accuracy_null(xbar, zbar, masks, human_ties="skip", sizes=None, batch=2000, rtol=TIE_RTOL):
    """Null draws of system-level pairwise accuracy (pooled over language pairs when ``sizes`` gives each
    language pair's number of systems; the scores of all of them standardized together).

    A system pair (a, b) of a hybrid compares ``h_a`` and ``h_b``, each taken from one metric or the other
    by the mask bits ``(m_a, m_b)``: four cases, whose agreement with the human is tabulated once per metric
    pair. A draw's agreement count is then a one-hot product ``onehot(2 m_a + m_b) . table`` (for ``h_j`` the
    complement ``3 - (2 m_a + m_b)``), one matrix product for all metric pairs and draws.

    ``xbar`` (P, N), ``zbar`` (N,), ``masks`` bool (k, N); ``rtol`` the relative tie tolerance; returns (pairs, k)
    differences of accuracies."""
    std = zscore(xbar, axis=-1)
    p, n = std.shape
    sizes = [n] if sizes is None else list(sizes)
    bounds = np.cumsum([0] + sizes)
    pa, pb = [], []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        a, b = np.triu_indices(hi - lo, 1)
        pa.append(a + lo)
        pb.append(b + lo)
    pa, pb = np.concatenate(pa), np.concatenate(pb)
    dz = np.sign(zbar[pa] - zbar[pb]) * ~are_tied(zbar[pa], zbar[pb], rtol=rtol)
    counted = np.ones(pa.size, dtype=bool) if human_ties == "count" else dz != 0
    total = counted.sum()
    ia, ib = _pairs(p)
    k = masks.shape[0]
    if not ia.size:
        return np.empty((0, k))
    table = np.empty((ia.size, 4, pa.size))
    for c, (ma, mb) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):  # h_i takes metric i where m = 1
        ha = np.where(ma, std[ia][:, pa], std[ib][:, pa])
        hb = np.where(mb, std[ia][:, pb], std[ib][:, pb])
        dx = np.sign(ha - hb) * ~are_tied(ha, hb, rtol=rtol)
        table[:, c] = ((dx == dz) & counted).astype(np.float64)
    flat = table.reshape(ia.size, -1).T  # (4 S, pairs)
    out = np.empty((ia.size, k))
    s = pa.size
    cols = np.arange(s)
    for lo in range(0, k, batch):
        m = masks[lo:lo + batch].astype(np.int64)
        code = 2 * m[:, pa] + m[:, pb]  # (b, S)
        onehot = np.zeros((code.shape[0], 4 * s))
        rows = np.arange(code.shape[0])[:, None]
        onehot[rows, code * s + cols] = 1.0
        agree_i = onehot @ flat
        onehot[:] = 0.0
        onehot[rows, (3 - code) * s + cols] = 1.0
        agree_j = onehot @ flat
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, lo:lo + code.shape[0]] = ((agree_i - agree_j) / total).T
    return out
