"""The statistics of the WMT metrics task, on systems x segments matrices, with segment resampling.

Every task statistic here is computed for ``P`` metrics at once (``xs`` of shape ``(P, N, M)``) and, under
segment resampling (BOOT-INPUTS: count weights ``c`` of shape ``(k, M)``, one draw per language pair shared
by every task and metric of that language pair), for every resample, from per-metric quantities computed
once: system means are ``(c @ X^T) / sum(c)``; item-grouped correlations are computed once per segment and
averaged with weights ``c``; no-grouping Pearson uses per-segment moments; DARR counts are per segment.
Copies of one drawn segment are separate groups (item-grouped) or extra points (Pearson): they never form
a pair.

Statistics (``x`` a metric, ``z`` the human, over the ``N`` systems of one language pair):

* **pairwise accuracy** (Kocmi et al. 2021): over the system pairs the human does not tie, the share whose
  system-score difference has the same sign under the metric (a metric tie is an error); pooled over
  language pairs by summing agreements and pairs, not by averaging accuracies;
* **soft pairwise accuracy** (Thompson et al. 2024, WMT24): ``SPA = (1 / C(N, 2)) sum_{i<j}
  (1 - |p^h_ij - p^x_ij|)``, ``p_ij`` the one-sided paired-permutation p-value of "system i is better
  than system j" from the segment scores (each segment's two scores swapped with probability 1/2;
  ``p = (1 + #{delta_s >= delta}) / (1 + R)``), the same swaps for the human and every metric;
* **WMT DARR Kendall-like tau** (Ma et al. 2018, 2019): over pairs of translations of one segment whose
  human scores differ by at least ``threshold`` (25 DA points), ``(Concordant - Discordant) /
  (Concordant + Discordant)`` summed over all segments (a metric tie is Discordant);
* the levels of :mod:`metaeval.stats.levels` for Pearson and the pairwise coefficients (acc-eq with a
  per-metric calibrated tie threshold is acc23).
"""
from __future__ import annotations

import numpy as np

from metaeval.errors import ParameterError
from metaeval.stats.coefficients import correlation_rows, pearson_r
from metaeval.stats.corpus import CorpusScores, system_pair_deltas
from metaeval.stats.levels import level_correlation
from metaeval.stats.ties import are_tied

__all__ = ["corpus_system_pvalues", "darr_counts", "pearson_null", "hybrid_null", "pair_pvalues",
           "pair_values", "pair_values_null", "pairwise_agreement", "random_bits", "random_words", "resampled_task",
           "soft_pairwise_accuracy", "system_accuracy_null", "system_null", "system_pvalues", "zscore"]


def _means(x, weights):
    """System means ``(P, N)`` (weights None) or ``(P, k, N)`` under segment count weights ``(k, M)``."""
    if weights is None:
        return x.mean(axis=-1)
    return np.einsum("km,pnm->pkn", weights.astype(np.float64), x) / weights.sum(axis=1)[None, :, None]


def pairwise_agreement(xbar, zbar, human_ties="skip"):
    """``(agree, pairs)``: system pairs ordered alike by ``xbar`` and ``zbar`` (..., N) - Kocmi et al. (2021).

    ``human_ties='skip'``: among the pairs the human does not tie (a metric tie is a disagreement).
    ``human_ties='count'`` (mt-metrics-eval's ``Agreement``): every pair counts, and agrees when
    ``sign(x_a - x_b) = sign(z_a - z_b)``, so a pair the human ties agrees only if the metric ties it too.
    Ties are the tie rule of :mod:`metaeval.stats.ties`."""
    ia, ib = np.triu_indices(xbar.shape[-1], 1)
    dz = np.sign(zbar[..., ia] - zbar[..., ib]) * ~are_tied(zbar[..., ia], zbar[..., ib])
    dx = np.sign(xbar[..., ia] - xbar[..., ib]) * ~are_tied(xbar[..., ia], xbar[..., ib])
    counted = np.ones_like(dz, dtype=bool) if human_ties == "count" else dz != 0
    return ((dx == dz) & counted).sum(axis=-1), np.broadcast_to(counted.sum(axis=-1), dx.shape[:-1])


def system_pvalues(s, signs, pvalue="randomized"):
    """One-sided paired-permutation p-values ``p[..., i, j]`` of "system i scores higher than system j".

    ``s`` (..., N, M) segment scores, ``signs`` (R, M) of +-1 shared by every matrix. ``delta = mean_m
    (s_im - s_jm)``, ``delta_r = mean_m signs_rm (s_im - s_jm)`` and with ``c = #{delta_r >= delta}``
    (tolerance ``100 eps |delta|`` of :func:`metaeval.stats.permutation.count_extreme`)
    ``p = (1 + c) / (1 + R)`` (``pvalue='randomized'``) or ``c / R`` (``'fraction'``, mt-metrics-eval's
    ``pce.compute_pairwise_p_values``, Thompson et al. 2024). ``delta_r`` of every pair is a difference of
    per-system sums ``signs @ s_i`` (one product for all systems)."""
    n = s.shape[-2]
    ia, ib = np.triu_indices(n, 1)
    m = s.shape[-1]
    partial = (s.reshape(-1, m) @ np.asarray(signs, dtype=np.float64).T).reshape(s.shape[:-1] + (-1,)) / m  # (..., N, R)
    means = s.mean(axis=-1)
    null = partial[..., ia, :] - partial[..., ib, :]
    delta = means[..., ia] - means[..., ib]
    return _pair_matrix(null, delta, n, pvalue)


def corpus_system_pvalues(x: CorpusScores, signs, pvalue="randomized"):
    """:func:`system_pvalues` of a corpus metric: ``delta`` is the difference of the two systems' corpus
    scores, and a permutation swaps the two systems' statistics on the segments with ``signs = -1`` before
    re-scoring both corpora (:func:`metaeval.stats.corpus.system_pair_deltas`, approximate randomization)."""
    n = x.shape[0]
    ia, ib = np.triu_indices(n, 1)
    swap = (np.asarray(signs) < 0).astype(np.float64)  # (R, M)
    delta, null, _ = system_pair_deltas(x.statistics, x.present, x.aggregate, list(zip(ia, ib)), "randomization",
                                        swap)
    return _pair_matrix(null, delta, n, pvalue)


def _pair_matrix(null, delta, n, pvalue="randomized"):
    """``p[i, j]`` (upper triangle: i better, lower: j better) from the permuted ``null`` (..., pairs, R) and
    the observed ``delta`` (..., pairs), with the tolerance ``100 eps |delta|``."""
    ia, ib = np.triu_indices(n, 1)
    tol = 100 * np.finfo(float).eps * np.abs(delta)[..., None]
    r = null.shape[-1]
    add = 1 if pvalue == "randomized" else 0
    upper = (add + (null >= delta[..., None] - tol).sum(axis=-1)) / (add + r)
    lower = (add + (null <= delta[..., None] + tol).sum(axis=-1)) / (add + r)  # j better: -delta_r >= -delta
    out = np.full(delta.shape[:-1] + (n, n), np.nan)
    out[..., ia, ib] = upper
    out[..., ib, ia] = lower
    return out


def soft_pairwise_accuracy(xs, z, signs, corpus=None, pvalue="randomized"):
    """SPA of each metric ``xs`` (P, N, M) against the human ``z`` (N, M), Thompson et al. (2024).

    Complete matrices only (a system pair is compared on the segments both have); ``signs`` (R, M).
    ``corpus``: ``{metric index: CorpusScores}`` whose p-values compare corpus scores
    (:func:`corpus_system_pvalues`), with the same swaps. ``pvalue``: the p-value convention of
    :func:`system_pvalues`."""
    n = z.shape[0]
    ia, ib = np.triu_indices(n, 1)
    pz = system_pvalues(z, signs, pvalue)[ia, ib]
    px = system_pvalues(xs, signs, pvalue)[:, ia, ib]
    for index, scores in (corpus or {}).items():
        px[index] = corpus_system_pvalues(scores, signs, pvalue)[ia, ib]
    return 1.0 - np.abs(px - pz[None]).mean(axis=-1)


def darr_counts(xs, z, threshold):
    """Per metric and segment, ``(concordant, discordant)`` over system pairs with ``|z_a - z_b| >=
    threshold`` (WMT DARR; Ma et al. 2018, 2019): shapes (P, M). A metric tie is discordant; missing
    cells make no pair."""
    n = z.shape[0]
    ia, ib = np.triu_indices(n, 1)
    dz = z[ia] - z[ib]  # (pairs, M)
    use = np.abs(dz) >= threshold
    dx = xs[:, ia] - xs[:, ib]  # (P, pairs, M)
    with np.errstate(invalid="ignore"):
        conc = ((dx > 0) & (dz > 0)) | ((dx < 0) & (dz < 0))
        valid = use & np.isfinite(dz) & np.isfinite(dx)
    c = (conc & valid).sum(axis=1)
    return c, valid.sum(axis=1) - c


def resampled_task(xs, z, *, level, coefficient, weights=None, tie_thresholds=None, undefined="skip",
                   darr_threshold=25.0, system_scores=None):
    """A task statistic of every metric: ``(P,)`` observed, or ``(P, k)`` under segment weights ``(k, M)``.

    Parameters
    ----------
    xs : ndarray (P, N, M)
        Metric scores; ``z`` (N, M) the human's. Complete rows are expected at system level.
    level : {'system', 'summary', 'global', 'by-system'}
    coefficient : str
        A coefficient of :mod:`metaeval.stats.coefficients`, or ``'darr'`` (segment pairs, WMT DARR).
        At system level, ``'accuracy'`` is Kocmi et al.'s pairwise accuracy.
    weights : ndarray of int (k, M), optional
        Segment count weights of the bootstrap resamples (None: the observed statistic).
    tie_thresholds : ndarray (P,), optional
        Per-metric tie threshold of acc-eq / tau-eq (tie calibration once per metric).
    system_scores : callable, optional
        System level: ``(p, weights) -> (N,)`` or ``(k, N)`` system scores of metric ``p`` replacing the
        mean of its segment scores (corpus BLEU / chrF / TER from summed sufficient statistics).
    """
    p, n, m = xs.shape
    thresholds = np.zeros(p) if tie_thresholds is None else np.asarray(tie_thresholds, dtype=float)
    if coefficient == "darr":
        if level != "summary":
            raise ParameterError(f"`level` must be 'summary' for the DARR Kendall-like tau; got {level!r}.")
        c, d = darr_counts(xs, z, darr_threshold)
        if weights is None:
            num, den = (c - d).sum(axis=1), (c + d).sum(axis=1)
        else:
            w = weights.astype(np.float64)
            num, den = (c - d) @ w.T, (c + d) @ w.T
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 0, num / den, np.nan)
    if level == "system":
        if system_scores is not None:
            xbar = np.stack([system_scores(i, weights) for i in range(p)])
        else:
            xbar = _means(xs, weights)
        zbar = _means(z[None], weights)[0]
        if coefficient == "accuracy":
            agree, pairs = pairwise_agreement(xbar, zbar)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(pairs > 0, agree / pairs, np.nan)
        return np.stack([correlation_rows(xbar[i].reshape(-1, n), np.broadcast_to(zbar, xbar[i].shape)
                                          .reshape(-1, n), coefficient, thresholds[i]).reshape(xbar.shape[1:-1])
                         for i in range(p)])
    if level == "by-system" and weights is not None:
        return _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined)
    if level in ("summary", "by-system"):
        axis_groups = (lambda a: np.swapaxes(a, -1, -2)) if level == "summary" else (lambda a: a)
        zg = axis_groups(z)
        r = np.stack([correlation_rows(axis_groups(xs[i]), zg, coefficient, thresholds[i]) for i in range(p)])
        defined = np.isfinite(r)
        if undefined == "zero":
            enough = (np.isfinite(axis_groups(xs)) & np.isfinite(zg)[None]).sum(axis=-1) >= 2
            r, defined = np.where(defined, r, 0.0), defined | enough
        rv = np.where(defined, r, 0.0)
        if weights is None:
            with np.errstate(invalid="ignore", divide="ignore"):
                return rv.sum(axis=1) / defined.sum(axis=1)
        w = weights.astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (rv @ w.T) / (defined.astype(np.float64) @ w.T)
    if level == "global" and coefficient == "pearson":
        return _global_pearson(xs, z, weights)
    if weights is None:
        return np.array([float(level_correlation(xs[i], z, level=level, coefficient=coefficient,
                                                 undefined=undefined, tie_threshold=thresholds[i]).statistic)
                         for i in range(p)])
    return _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined)


def _resampled_matrices(xs, z, level, coefficient, weights, thresholds, undefined, batch=16):
    """Any level and coefficient under segment weights: the compiled global pair counts when they apply,
    otherwise the reference path on the resampled matrices (segment indices rebuilt from the weights,
    copies of one segment never a pair)."""
    p = xs.shape[0]
    k, m = weights.shape
    out = np.empty((p, k))
    if level == "global" and not thresholds.any():
        from metaeval.stats.kernels.global_pairs import COEFFICIENTS, GlobalPairsBootstrap, numba_available

        if coefficient in COEFFICIENTS and numba_available():
            rows = np.ones((k, xs.shape[1]), dtype=np.int64)
            for i in range(p):
                out[i] = GlobalPairsBootstrap(xs[i], z, coefficient).from_weights(rows, weights)
            return out
    cols = np.repeat(np.broadcast_to(np.arange(m), (k, m)).ravel(), weights.ravel()).reshape(k, m)
    for lo in range(0, k, batch):
        c = cols[lo:lo + batch]
        zs = z[:, c].transpose(1, 0, 2)
        for i in range(p):
            out[i, lo:lo + batch] = level_correlation(
                xs[i][:, c].transpose(1, 0, 2), zs, level=level, coefficient=coefficient, undefined=undefined,
                tie_threshold=thresholds[i], col_units=c).statistic
    return out


def _global_pearson(xs, z, weights):
    """No-grouping Pearson from per-segment moments (complete matrices): linear in the metrics."""
    w = np.ones((1, xs.shape[2])) if weights is None else weights.astype(np.float64)
    n_rows = xs.shape[1]
    cnt = w.sum(axis=1) * n_rows  # (k,)
    sz, szz = w @ z.sum(axis=0), w @ (z * z).sum(axis=0)
    sx = np.einsum("km,pm->pk", w, xs.sum(axis=1))
    sxx = np.einsum("km,pm->pk", w, (xs * xs).sum(axis=1))
    sxz = np.einsum("km,pm->pk", w, (xs * z[None]).sum(axis=1))
    vxz = sxz - sx * sz / cnt
    vxx = sxx - sx * sx / cnt
    vzz = szz - sz * sz / cnt
    r = pearson_r(vxz, vxx, np.sqrt(vzz))
    return r[:, 0] if weights is None else r


# --- Permutation tests between metrics, as mt-metrics-eval runs them (WMT22-24) -----------------------------
#
# For two metrics i < j with standardized scores x_i, x_j over the units u of a task (systems at system level,
# cells at segment level), a draw r is a mask m_r of independent fair bits, one per unit, and the hybrids
#     h_i = m_r x_i + (1 - m_r) x_j,    h_j = (1 - m_r) x_i + m_r x_j
# exchange the two metrics' scores on the units with m = 0. The null draw of the pair is
#     null_r = stat(h_i) - stat(h_j),
# and stat(h_i) - stat(h_j) at m = 1 is the observed delta. Every function below returns the null draws of
# every pair i < j (``np.triu_indices(P, 1)`` order) as an array (pairs, k); the masks are drawn once per task
# and shared by every pair (mt-metrics-eval draws them anew for each pair: each pair's null distribution is
# the same, only the dependence between pairs differs).


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


def pair_values(x, z, level, coefficient, threshold):
    """Per pair of the level, the value of acc-eq (1 if the metric and the human agree - both tie or both
    order the pair alike -, else 0) or tau-eq (+1 / -1) with the metric's tie ``threshold``, and each pair's
    weight ``1 / (G P_g)``, so that the statistic is ``sum weight * value`` (Deutsch, Foster & Freitag 2023).

    Complete matrices; the metric ties a pair when its gap ``|x_a - x_b| <= threshold`` (mt-metrics-eval's
    rule) or when the two scores are tied under the tie rule of :mod:`metaeval.stats.ties`."""
    from metaeval.stats.tie_calibration import group_vectors

    xg, zg = group_vectors(x, z, level)
    g, n = xg.shape
    ia, ib = np.triu_indices(n, 1)
    xa, xb, za, zb = xg[:, ia], xg[:, ib], zg[:, ia], zg[:, ib]
    metric_tied = are_tied(xa, xb) | (np.abs(xa - xb) <= threshold)
    human_tied = are_tied(za, zb)
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


def system_accuracy_null(xbar, zbar, masks, human_ties="skip", sizes=None, batch=2000):
    """Null draws of system-level pairwise accuracy (pooled over language pairs when ``sizes`` gives each
    language pair's number of systems; the scores of all of them standardized together).

    A system pair (a, b) of a hybrid compares ``h_a`` and ``h_b``, each taken from one metric or the other
    by the mask bits ``(m_a, m_b)``: four cases, whose agreement with the human is tabulated once per metric
    pair. A draw's agreement count is then a one-hot product ``onehot(2 m_a + m_b) . table`` (for ``h_j`` the
    complement ``3 - (2 m_a + m_b)``), one matrix product for all metric pairs and draws.

    ``xbar`` (P, N), ``zbar`` (N,), ``masks`` bool (k, N); returns (pairs, k) differences of accuracies."""
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
    dz = np.sign(zbar[pa] - zbar[pb]) * ~are_tied(zbar[pa], zbar[pb])
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
        dx = np.sign(ha - hb) * ~are_tied(ha, hb)
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
