"""Permutation kernels shared by every metric pair of one all-pairs matrix (complete data).

Per-metric work (linear in the number of metrics ``P``) is done once per batch; each pair then combines
a few numbers per resample.

* **Global level, Pearson** (:class:`GlobalPearsonShared`). Under a swap mask ``m`` the permuted metric
  of pair ``(i, j)`` is ``X' = X_i + m (X_j - X_i)``, so ``sum X'``, ``sum X'^2`` and ``sum X' z`` are
  ``S_i + m.X_j - m.X_i`` with the per-metric masked sums ``m.X_p``, ``m.X_p^2``, ``m.(X_p z)``
  (``3 P`` numbers per resample, one exact BLAS product, :class:`ExactWeightedSums`); ``Y'`` takes the
  complementary cells: ``sum Y' = S_i + S_j - sum X'`` and likewise for the other sums.
* **Summary level, pair-count coefficients without ties** (:class:`SummaryPairsShared`). When no two
  metric values of one input tie (over all metrics), the permuted numerator ``S_b = sum_{a<c} t_ac
  sgn(X'_a - X'_c)`` of input ``b`` satisfies ``S_b(X') - S_b(Y') = D_b + sum_a m_ab G_ab`` with integer
  ``D`` and ``G`` (see the class), and every pair-count coefficient of an input is affine in ``S_b`` with
  constant coefficients (the metric has no ties, the human is not permuted): Kendall tau-a / b / c,
  accuracy, acc-eq and tau-eq with ``t_ac = sgn(z_a - z_c)``, and Spearman with the integer weights
  ``t_ac = U_a - U_c`` (``U`` twice the human's centred average ranks). So ``delta_s`` of every pair is
  one exact integer matrix product per group of inputs with equal scale, then a fixed-order weighted sum
  over the groups (:class:`metaeval.stats.kernels.kendall.mask_products.PairMaskProducts`).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.kendall.affine_groups import COEFFICIENTS, group_affine, group_weights, human_weights  # noqa: F401
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.exact_sums import ExactWeightedSums
from metaeval.stats.kernels.kendall.mask_products import PAIR_CHUNK, PairMaskProducts
from metaeval.stats.correlations.ties import TIE_RTOL, are_tied

__all__ = ["GlobalPearsonShared", "SummaryPairsShared"]


class GlobalPearsonShared:
    """Global-level Pearson of every pair from per-metric masked sums (PERM-BOTH, complete data)."""

    def __init__(self, std: np.ndarray, z: np.ndarray):
        p, n, m = std.shape
        self.p = p
        self.count = float(n * m)
        zc = (z - z.mean()).reshape(-1)
        self.zz = float(zc @ zc)
        x = std.reshape(p, -1)
        vals = np.concatenate([x, x * x, x * zc])  # (3P, NM)
        self.total = vals.sum(axis=1)
        self.sums_of = ExactWeightedSums(vals, n * m)
        self.cells = 3 * p + n * m // 8

    def _sums(self, cache: BatchCache) -> np.ndarray:
        def make():
            bits = cache.draws.mask(cache.sl)
            return self.sums_of(bits.reshape(bits.shape[0], -1))  # (b, 3P)

        return cache.get("global-pearson-sums", make)

    def _r(self, s1, s2, s3):
        vxx = s2 - s1 * s1 / self.count
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.clip(s3 / np.sqrt(vxx * self.zz), -1.0, 1.0)

    def covers(self, i: int, j: int) -> bool:
        """Every pair."""
        return True

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        rx, ry = self.evaluate(cache, i, j)
        return rx - ry

    def evaluate(self, cache: BatchCache, i: int, j: int):
        s = self._sums(cache)
        p = self.p
        x = [self.total[i + f * p] + s[:, j + f * p] - s[:, i + f * p] for f in range(3)]
        y = [self.total[i + f * p] + self.total[j + f * p] - x[f] for f in range(3)]
        return self._r(*x), self._r(*y)


def _pooled(std: np.ndarray, level: str) -> np.ndarray:
    """The metric values of every group, ``(G, P n)``, metric-major within a group."""
    p, n, m = std.shape
    if level == "summary":
        return std.transpose(2, 0, 1).reshape(m, p * n)
    if level == "by-system":
        return std.transpose(1, 0, 2).reshape(n, p * m)
    return std.reshape(1, -1)


def tie_free(std: np.ndarray, level: str = "summary", *, rtol: float = TIE_RTOL) -> bool:
    """True when no two metric values of one group tie, over every metric of ``std`` (P, N, M): the
    groups are the inputs (summary), the systems (by-system) or all cells (global)."""
    pooled = np.sort(_pooled(std, level), axis=1)
    return not bool(are_tied(pooled[:, 1:], pooled[:, :-1], rtol=rtol).any())


def _tie_chains(std: np.ndarray, level: str, rtol: float | None):
    """The chains of every group's pooled metric values: maximal runs of tied sorted neighbours.

    Returns ``(group, present, repeated)``: per chain its group (ascending), and ``(chains, P)`` booleans:
    the metrics with a value in the chain, and those with two or more (a tie within one metric).
    """
    p = std.shape[0]
    pooled = _pooled(std, level)
    g, size = pooled.shape
    order = np.argsort(pooled, axis=1, kind="stable")
    srt = np.take_along_axis(pooled, order, axis=1)
    tied = are_tied(srt[:, 1:], srt[:, :-1], rtol=rtol)  # (G, size - 1): value e + 1 ties value e
    member = np.zeros((g, size), dtype=bool)
    member[:, :-1] |= tied
    member[:, 1:] |= tied
    opens = member.copy()
    opens[:, 1:] &= ~tied  # a member not tied with the value before it opens a chain
    flat = np.flatnonzero(member.ravel())
    if flat.size == 0:
        empty = np.zeros((0, p), dtype=bool)
        return np.zeros(0, dtype=np.intp), empty, empty
    chain = np.cumsum(opens.ravel()[flat]) - 1
    labels = order.ravel()[flat] // (size // p)  # the metric of each chained value
    n_chains = int(chain[-1]) + 1
    counts = np.bincount(chain * p + labels, minlength=n_chains * p).reshape(n_chains, p)
    group = flat[opens.ravel()[flat]] // size
    return group, counts > 0, counts > 1


class TieChains:
    """The tie chains of ``std`` per level, computed once for :func:`tied_groups` and :func:`tie_free_pairs`
    (one call of :func:`metaeval.stats.significance.pair_permutations.permutation_pairs` asks for both)."""

    def __init__(self, std: np.ndarray, rtol: float = TIE_RTOL):
        self.std, self.rtol, self._levels = std, rtol, {}

    def of(self, level: str):
        if level not in self._levels:
            self._levels[level] = _tie_chains(self.std, level, self.rtol)
        return self._levels[level]


def tied_groups(std: np.ndarray, level: str = "summary", *, rtol: float = TIE_RTOL,
                chains: TieChains | None = None) -> dict:
    """``{(i, j): groups}``: for every metric pair ``i < j`` that may tie within a group (as in
    :func:`tie_free_pairs`, conservative), the sorted indices of those groups: the groups holding a chain
    with values of both metrics, or with two values of one of them. ``chains``: those of ``std`` at
    ``rtol``, when already made."""
    p = std.shape[0]
    group, present, repeated = (_tie_chains(std, level, rtol) if chains is None  # ascending group order
                                else chains.of(level))
    groups, at = np.unique(group, return_inverse=True)
    alone = np.zeros((groups.size, p), dtype=bool)  # a tie within metric i in the group: every pair with i
    rows, cols = np.nonzero(repeated)
    alone[at[rows], cols] = True
    joint: dict = {}  # chains holding values of two or more metrics (few): the pairs they join
    for c in np.flatnonzero(present.sum(axis=1) > 1):
        members = np.flatnonzero(present[c])
        for u, i in enumerate(members):
            for j in members[u + 1:]:
                joint.setdefault((int(i), int(j)), []).append(at[c])
    alone = np.asfortranarray(alone)  # a metric's column contiguous
    out: dict = {}
    for i in range(p):
        for j in range(i + 1, p):
            hit = alone[:, i] | alone[:, j]
            if (i, j) in joint:
                hit[joint[i, j]] = True
            if hit.any():
                out[i, j] = groups[hit].tolist()
    return out


def tie_free_pairs(std: np.ndarray, level: str = "summary", *, rtol: float = TIE_RTOL,
                   chains: TieChains | None = None) -> np.ndarray:
    """``(P, P)`` bool: True where no two values of metrics ``i`` and ``j`` (including two of one metric)
    tie within any group (conservative: False whenever both metrics hold values of one tie chain).

    A tie of two values of metrics ``i`` and ``j`` makes them, and every pooled value between them, one chain
    of tied sorted neighbours in the pool of all metrics; so pairs that share no chain have no tie, and
    neither has any ``X'`` made of their values (a subset of the pair's values).
    """
    _, present, repeated = _tie_chains(std, level, rtol) if chains is None else chains.of(level)
    incidence = present.astype(np.float64)  # BLAS; counts of chains, exact in float64
    shared = (incidence.T @ incidence) > 0
    self_tied = repeated.any(axis=0)
    return ~(shared | self_tied[:, None] | self_tied[None, :])


def _signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sgn(a - b)`` as int8 (broadcast), from two comparisons."""
    return (a > b).view(np.int8) - (a < b).view(np.int8)


class SummaryPairsShared:
    """Summary-level pair-count coefficients and Spearman of every metric pair without metric ties
    (PERM-BOTH), from dense per-input sign tensors (small ``N``).

    For input ``b`` and systems ``a != c`` let ``t_ac`` be the human's integer pair weight (``sgn(z_a - z_c)``,
    0 for a human tie, for the Kendall family; ``U_a - U_c`` with ``U = 2 h - (N + 1)``, ``h`` the human's
    average ranks, for Spearman), ``A = sgn(X_i a - X_i c)``, ``E = sgn(X_j a - X_j c)``,
    ``B = sgn(X_j a - X_i c)``, ``C = sgn(X_i a - X_j c)``. With ``f(m) = sum_{a<c} t_ac s(X'_a, X'_c)`` and
    ``Y' = X'`` under ``1 - m``, ``f(m) - f(1 - m) = sum_{a<c} t_ac [(1 - m_a - m_c)(A - E) + (m_a - m_c)(B - C)]``:
    ``D_b = sum_{a<c} t_ac (A - E)_ac`` and ``G_ab = sum_{c != a} t_ac ((B - C) - (A - E))_ac`` (``t``, ``A``,
    ``E`` are antisymmetric and ``(B - C)_ca = (B - C)_ac``, so both orders of a pair give the same term).
    Spearman is affine in ``S``: a tie-free metric's ranks are ``R_a = (N + 1) / 2 + (1/2) sum_c sgn(X_a - X_c)``,
    so its numerator ``sum_a (R_a - Rbar) U_a / 2 = S / 4`` and its denominator is constant
    (:func:`~metaeval.stats.kernels.kendall.affine_groups.group_affine`). Coefficient ``= scale_b S_b + offset_b``, so
    ``delta = sum_b w_b scale_b (D_b + m_b . G_b)`` over the defined inputs (``w_b = 1 / #defined``, or
    ``1 / M`` with ``undefined='zero'``). Inputs are grouped by ``scale_b``; the products are exact
    (:class:`metaeval.stats.kernels.kendall.mask_products.PairMaskProducts`: ``|G| <= 4 (N - 1) max|t|``) and the
    groups are added in a fixed order: results do not depend on the batch.
    """

    @staticmethod
    def applicable(n: int, m: int) -> bool:
        """Dense ``(M, N, N)`` tensors stay small (``N <= 32``) and the products are exact in float64."""
        return n <= 32 and 8 * (n - 1) ** 2 * n * m < 2**53

    def __init__(self, std: np.ndarray, z: np.ndarray, coefficient: str, undefined: str, tied: dict | None = None,
                 *, rtol: float = TIE_RTOL):
        p, n, m = std.shape
        self.p, self.n, self.m = p, n, m
        self.tied = tied or {}
        self.correction = None
        if self.tied:  # the inputs where a pair's metrics tie: counted per resample (compiled)
            from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

            self.correction = GroupPairsCompiled(std, z, coefficient, undefined, "summary", self.tied, rtol=rtol)
        key, tz, distinct, uu = human_weights(z.T, coefficient, rtol)  # (M, N)
        if coefficient == "spearman":
            t = key[:, :, None] - key[:, None, :]
        else:
            t = np.sign(key[:, :, None] - key[:, None, :])
        self.t = t.astype(np.int16 if coefficient == "spearman" else np.int8)  # |t| <= 2 (N - 1): no overflow
        scale, _ = group_affine(coefficient, n * (n - 1) / 2.0, tz, n, distinct, uu)
        self.weight, self.nan = group_weights(scale, undefined, grouped=True)
        # affine offsets cancel in X' - Y'; the human's zero inputs add 0 - 0
        xt = np.ascontiguousarray(std.transpose(0, 2, 1))  # (P, M, N)
        self.xt = xt
        self._own: dict = {}
        self._by_input = None
        # groups of inputs with one weight, in increasing order of weight (a fixed order)
        levels, inverse = np.unique(self.weight, return_inverse=True)
        self.groups = [(float(levels[g]), np.flatnonzero(inverse == g)) for g in range(levels.size)
                       if levels[g] != 0.0]
        self.cells = n * m // 4 + 8 * p

    def _own_terms(self, q: int):
        """``(sum_{a<c} t_ac A_ac (M,), sum_c t_ac A_ac (M, N))`` of metric ``q`` (``A`` its signs), once each; ``t A``
        is symmetric (both antisymmetric), so the first is half the sum of the second."""
        if q not in self._own:
            x = self.xt[q]
            rows = np.einsum("mac->ma", self.t * _signs(x[:, :, None], x[:, None, :])).astype(np.int64)
            self._own[q] = rows.sum(axis=1) // 2, rows
        return self._own[q]

    def _cross_terms(self, i: int, j: int) -> np.ndarray:
        """``sum_c t_ac (B - C)_ac`` (M, N) of pair ``(i, j)``: with ``b_ac = sgn(X_j a - X_i c)`` (``B = b``,
        ``C_ac = -b_ca``) and ``t`` antisymmetric, ``sum_c t_ac b_ac - sum_c t_ca b_ca`` (numpy; with numba,
        :func:`metaeval.stats.kernels.kendall.summary_pairs_compiled.cross_sign_sums` for a chunk of pairs)."""
        tb = self.t * _signs(self.xt[j][:, :, None], self.xt[i][:, None, :])
        # sums of N <= 32 terms of |t| <= 1 (Kendall, int8) or 2 (N - 1) (Spearman, int16): exact in t's type
        return np.einsum("mac->ma", tb).astype(np.int64) - np.einsum("mac->mc", tb)

    def _chunk_terms(self, pairs: list):
        """``(D (M, q), G (q, M, N))`` of the pairs as integers, ``D = sum_{a<c} t_ac (A - E)_ac`` and
        ``G_ab = sum_c t_ac ((B - C) - (A - E))_ac``, the terms of ``A`` and ``E`` the metrics' own
        (:meth:`_own_terms`); the inputs where a pair's metrics tie set to 0 (counted per resample)."""
        from metaeval.stats.kernels import compiler
        if compiler.numba_available():
            from metaeval.stats.kernels.kendall.summary_pairs_compiled import cross_sign_sums

            if self._by_input is None:  # inputs in the last axis (the compiled loop's vector axis)
                self._by_input = (np.ascontiguousarray(self.xt.transpose(0, 2, 1)),
                                  np.ascontiguousarray(self.t.transpose(1, 2, 0)))
            from metaeval.stats.kernels import parts

            g = np.empty((len(pairs), self.n, self.m), dtype=np.int64)
            first = np.array([i for i, _ in pairs], dtype=np.int64)
            second = np.array([j for _, j in pairs], dtype=np.int64)
            cuts = np.linspace(0, len(pairs), min(parts.threads(), max(len(pairs), 1)) + 1).astype(int)
            parts.run_parts(lambda lo, hi: cross_sign_sums(*self._by_input, first[lo:hi], second[lo:hi], g[lo:hi]),
                            [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo])
            g = g.transpose(0, 2, 1)
        else:
            g = np.stack([self._cross_terms(i, j) for i, j in pairs])
        d = np.empty((self.m, len(pairs)), dtype=np.int64)
        for q, (i, j) in enumerate(pairs):
            (k_i, l_i), (k_j, l_j) = self._own_terms(i), self._own_terms(j)
            g[q] += l_j - l_i
            d[:, q] = k_i - k_j
            tied = self.tied.get((i, j))
            if tied:
                d[tied, q] = 0
                g[q, tied] = 0
        return d, g

    def prepare(self, pairs):
        """Integer terms of the given pairs, per group of inputs and chunk of pairs."""
        self.pairs = list(pairs)
        q = len(self.pairs)
        self.products = PairMaskProducts(q, self.n, self.m)
        cells = np.arange(self.n * self.m).reshape(self.m, self.n)
        chunks = []
        for lo in range(0, q, PAIR_CHUNK):
            chunks.append(self._chunk_terms(self.pairs[lo:lo + PAIR_CHUNK]))
        for w, cols in self.groups:  # fixed order
            const = np.concatenate([d[cols].sum(axis=0) for d, _ in chunks])
            group = self.products.add_group(w, cells[cols].reshape(-1), const)
            for k, (_, g) in enumerate(chunks):
                self.products.add_terms(group, k * PAIR_CHUNK, g[:, cols].reshape(g.shape[0], -1))
        self.index = {pair: k for k, pair in enumerate(self.pairs)}

    def covers(self, i: int, j: int) -> bool:
        """Whether pair ``(i, j)`` was prepared."""
        return (i, j) in self.index

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        if self.nan:
            return np.full(len(range(*cache.sl.indices(cache.draws.n_resamples))), np.nan)
        out = self.products.evaluate(cache)[self.index[i, j]]
        return out if self.correction is None else self.correction.tied_deltas(cache, i, j, out)
