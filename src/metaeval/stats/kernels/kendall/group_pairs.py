"""Pair terms of large groups from weighted dominance counts, compiled with numba (PERM-BOTH, no metric ties).

For one group of ``n`` cells (a system's row at by-system level, all ``N M`` cells at global level, an
input at summary level) with swap bits ``m_c``, the pair-count coefficients and Spearman of the permuted
metrics of pair ``(i, j)`` satisfy ``S(X') - S(Y') = D + sum_c m_c G_c`` with integer ``D`` and ``G``
(:class:`metaeval.stats.kernels.kendall.summary_pairs.SummaryPairsShared`, with ``A, B, C, E`` its sign matrices and
``x = X_i``, ``y = X_j``). Writing ``T(v; w)_c = sum_d t_cd sgn(v_c - w_d)`` for the human's integer pair
weights ``t`` (``sgn(z_c - z_d)`` for the Kendall family, ``U_c - U_d`` for Spearman),

    ``G_c = T(y; x)_c - T(x; y)_c - K_i[c] + K_j[c]`` and ``D = (1/2) sum_c (K_i[c] - K_j[c])``,

with the per-metric self terms ``K_p = T(X_p; X_p)`` (``sum_{c<d} t_cd A_cd = (1/2) sum_c K_i[c]`` since ``t``
and ``A`` are antisymmetric). Each ``T(v; w)`` is a sweep over the merged metric orders of ``v`` and ``w``
(metric values of one group never tie, so ``w_d < v_c`` or ``w_d > v_c`` for ``d != c``, and ``t_cc = 0``):

* Kendall: with ``lo_less`` / ``lo_greater`` the cells ``w_d < v_c`` with a smaller / larger human score
  than ``z_c`` (read from a Fenwick tree over the human's dense ranks holding the cells visited so far) and
  ``less_c`` / ``greater_c`` all such cells of the group, ``sum_d sgn(z_c - z_d) sgn(v_c - w_d)
  = (lo_less - lo_greater) - ((less_c - lo_less) - (greater_c - lo_greater))
  = 2 (lo_less - lo_greater) + greater_c - less_c``. O(n log n) per term (a 2-D dominance count, as
  Knight's).
* Spearman: ``sum_d (U_c - U_d) sgn(v_c - w_d) = U_c (lo - hi) - (U_lo - U_hi)`` with ``lo`` / ``hi`` the cells
  below / above ``v_c`` and ``U_lo`` / ``U_hi`` their sums of ``U``: O(n) after sorting.

All counts are exact int64. The loops are compiled with numba (:mod:`metaeval.stats.kernels.kendall.calibration_compiled`, once per
installation); numba is never imported by ``import metaeval``. Without numba
the factories of :mod:`metaeval.stats.significance.pairs` use the dense numpy kernel for small groups or the reference
path.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314).
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import coefficient_from_counts, tau_b
from metaeval.stats.kernels.kendall.affine_groups import group_affine, group_weights, human_weights
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.kendall.mask_products import PAIR_CHUNK, PairMaskProducts
from metaeval.stats.correlations.ties import NOISE_RTOL, TIE_RTOL, are_tied

__all__ = ["GroupPairsCompiled", "SWEEP_CACHE_BYTES", "SWEEP_COUNT_BYTES", "SWEEP_PAIRS"]

SWEEP_CACHE_BYTES = 1 << 26
"""The merged inputs of :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_counts` kept across batches, in
bytes (64 MiB; 27 bytes per pooled value: 0.8 MiB for a pair of 10 rows of 1,418 segments); beyond it a pair's
are merged again for each batch (the same inputs)."""


SWEEP_PAIRS = 32
"""Pairs :meth:`GroupPairsCompiled._swept_tau_b` sweeps in one call (their groups side by side: fewer, larger calls,
whose threads start once; the same counts as one call per pair)."""


SWEEP_COUNT_BYTES = 1 << 25
"""The counts of one such call at most, in bytes (32 MiB; 48 bytes per group and resample), beyond one pair."""


def _compiled():
    """``(signed_sums, pair_terms)`` (:mod:`metaeval.stats.kernels.kendall.calibration_compiled`, imported on first use)."""
    from metaeval.stats.kernels.kendall.group_pairs_compiled import pair_terms, signed_sums

    return signed_sums, pair_terms


class GroupPairsCompiled:
    """Pair-count coefficients and Spearman of every metric pair at the summary, by-system or global level
    (PERM-BOTH, complete data, no metric ties within a group), from compiled O(n log n) pair terms.

    Each group's coefficient is ``scale_g S_g + offset_g`` (:func:`metaeval.stats.kernels.kendall.affine_groups.group_affine`
    with ``n`` the group's cells: the metric has no ties and nothing is copied, so the pairs of a group are
    its ``n (n - 1) / 2`` cell pairs); the offsets cancel in ``X' - Y'``, so
    ``delta = sum_g w_g (D_g + m_g . G_g)`` with ``w_g`` from :func:`group_weights` (the mean over the defined
    groups; the global level is one group). The sums over cells are exact integer products
    (:class:`PairMaskProducts`), the groups are added in a fixed order.

    ``tied`` (:func:`metaeval.stats.kernels.kendall.summary_pairs.tied_groups`): for a pair whose metrics may tie within
    some groups, those groups are left out of its products and their ``r(X'_g) - r(Y'_g)`` is computed per
    resample from exact pair counts of ``X'_g`` and ``Y'_g``
    (:func:`metaeval.stats.kernels.kendall.group_counts.tied_group_counts`: one merged pass over the pair's pre-sorted
    values, a Fenwick tree over the human ranks; with ties the denominators depend on the mask, so ``S(X')``
    and ``S(Y')`` are needed, not only their difference) and the generic formulas
    (:func:`metaeval.stats.correlations.coefficients.coefficient_from_counts`; Spearman from the doubled average ranks),
    added with weight ``1 / #groups used``. Kendall tau-b counts them instead with
    :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_counts`, one pass per pair vectorised over blocks of
    resamples (:meth:`_swept_tau_b`; the same counts, near ties decided per resample by the generic rule); the
    other coefficients read small groups (``n <= 12``) from tables over every swap mask
    (:mod:`metaeval.stats.kernels.kendall.mask_tables`; the same values). A permuted group that is constant (its
    coefficient undefined) is counted here (:meth:`tied_deltas`), except at the global level (one group: the
    statistic is undefined) and, under ``undefined='skip'``, for a pair that also has groups without a tie:
    those resamples take the generic path.
    """

    def __init__(self, std: np.ndarray, z: np.ndarray, coefficient: str, undefined: str, level: str,
                 tied: dict | None = None, *, rtol: float = TIE_RTOL):
        p, n, m = std.shape
        self.p, self.n, self.m = p, n, m
        cells = np.arange(n * m).reshape(m, n).T  # flat index b N + a of cell (a, b)
        if level == "summary":
            xg, zg, cg = std.transpose(0, 2, 1), z.T, cells.T
        elif level == "by-system":
            xg, zg, cg = std, z, cells
        else:  # global, in the order of the flat cell bits
            xg, zg, cg = std.transpose(0, 2, 1).reshape(p, 1, -1), z.T.reshape(1, -1), cells.T.reshape(1, -1)
        self.xg = np.ascontiguousarray(xg)  # (P, G, n)
        self.cg = cg
        size = zg.shape[1]
        self.spearman = coefficient == "spearman"
        self.key, tz, distinct, uu = human_weights(zg, coefficient, rtol)
        self.tz, self.distinct, self.uu = tz.astype(np.int64), distinct.astype(np.int64), uu
        # the human's dense ranks per group (the Kendall family's key; Spearman's key is U)
        self.zr = human_weights(zg, "kendall-b", rtol)[0] if self.spearman else self.key
        scale, _ = group_affine(coefficient, size * (size - 1) / 2.0, tz, size, distinct, uu)
        self.weight, self.nan = group_weights(scale, undefined, grouped=level != "global")
        defined = int(np.isfinite(scale).sum())
        self.n_agg = 1 if level == "global" else (defined if undefined == "skip" else scale.size)
        self.zg = zg
        self.coefficient = coefficient
        # groups where a pair's metrics may tie: counted per resample (see deltas)
        self.tied = {pair: [g for g in groups if self.weight[g] != 0.0] for pair, groups in (tied or {}).items()}
        self.cells = n * m // 4 + 8 * p
        self.std, self.z, self.level, self.undefined = std, z, level, undefined
        self._sorted = None  # each metric's values of each group sorted (Kendall tau-b's tied groups)
        self.rtol = rtol  # the relative tie tolerance of the tied groups
        self._tables = None  # the mask tables of small tied groups (mask_tables.py), made on first use
        self._swept, self._swept_bytes = {}, 0  # the sweep's merged inputs of each pair, kept across batches
        self._merge_buffers = None  # the merged inputs of the pairs not kept, rewritten for each chunk
        self.pairs, self.index = [], {}  # the prepared pairs (prepare); none when used for tied groups only
        self._count_buffer = None  # the sweep's counts, rewritten for each chunk
        self.defined_groups = np.flatnonzero(self.weight != 0.0)

    def _human(self, g: int):
        key = np.ascontiguousarray(self.key[g])
        if self.spearman:
            zero = np.zeros(1, dtype=np.int64)
            return key, zero, zero, 0
        counts = np.bincount(key)
        below = np.cumsum(counts) - counts
        less = below[key]
        greater = key.size - below[key] - counts[key]
        return key, less, greater, int(key.max())

    def _group(self, g: int, first: np.ndarray, second: np.ndarray):
        """Per-metric inputs of group ``g``: ``(values, orders, self terms, human key, less, greater, nz)``
        and the pairs' constants ``D_g``."""
        signed_sums, _ = _compiled()
        key, less, greater, nz = self._human(g)
        values = np.ascontiguousarray(self.xg[:, g])  # (P, n)
        orders = np.argsort(values, axis=1, kind="stable").astype(np.int64)
        self_terms = np.empty(values.shape, dtype=np.int64)
        tree = np.zeros(nz + 2, dtype=np.int64)
        for r in range(self.p):
            signed_sums(values[r], orders[r], values[r], orders[r], key, less, greater, self.spearman, tree,
                        self_terms[r])
        twice_d = self_terms[first].sum(axis=1) - self_terms[second].sum(axis=1)
        return (values, orders, self_terms, key, less, greater, nz), twice_d // 2

    def prepare(self, pairs):
        """Integer terms of every pair (compiled): one block of cells per weight (the groups of equal weight
        together, in increasing order of weight: a fixed order), stored a chunk of pairs at a time."""
        _, pair_terms = _compiled()
        self.pairs = list(pairs)
        q = len(self.pairs)
        first = np.array([i for i, _ in self.pairs], dtype=np.int64)
        second = np.array([j for _, j in self.pairs], dtype=np.int64)
        self.products = PairMaskProducts(q, self.n, self.m)
        skip: dict = {}
        for k, pair in enumerate(self.pairs):
            for g in self.tied.get(pair, []):
                skip.setdefault(g, []).append(k)
        levels, inverse = np.unique(self.weight, return_inverse=True)
        for level in range(levels.size):
            if levels[level] == 0.0:
                continue
            members = np.flatnonzero(inverse == level)
            inputs, consts = zip(*(self._group(g, first, second) for g in members))
            consts = np.array(consts)  # (members, pairs)
            for u, g in enumerate(members):
                consts[u, skip.get(g, [])] = 0
            block = self.products.add_group(float(levels[level]), np.concatenate([self.cg[g] for g in members]),
                                            consts.sum(axis=0))
            for lo in range(0, q, PAIR_CHUNK):
                hi = min(q, lo + PAIR_CHUNK)
                parts = []
                for g, args in zip(members, inputs):
                    values, orders, self_terms, key, less, greater, nz = args
                    out = np.empty((hi - lo, values.shape[1]), dtype=np.int64)
                    pair_terms(values, orders, first[lo:hi], second[lo:hi], self_terms, key, less, greater,
                               self.spearman, nz, out)
                    out[[k - lo for k in skip.get(g, []) if lo <= k < hi]] = 0  # from the reference (deltas)
                    parts.append(out)
                self.products.add_terms(block, lo, np.concatenate(parts, axis=1))
        self.index = {pair: k for k, pair in enumerate(self.pairs)}

    def covers(self, i: int, j: int) -> bool:
        """Whether pair ``(i, j)`` was prepared (its metrics have no tie within a group)."""
        return (i, j) in self.index

    def _tied_inputs(self, i: int, j: int, groups=None):
        """The compiled loop's inputs for the groups of pair ``(i, j)`` with metric ties (or the groups
        ``groups`` of them; rebuilt per batch: an argsort per group, small beside the counting, and no memory
        held per pair).

        A group whose pooled values form few tie groups (rounded scores, judges' grades: ``groups x distinct
        human values <= 8 n``), each tied within (not a chain of near-ties longer than the tolerance), is
        counted from contingency tables; the others by the ordered pass."""
        groups = np.array(self.tied[i, j] if groups is None else groups, dtype=np.intp)
        pooled = np.concatenate([self.xg[i, groups], self.xg[j, groups]], axis=1)  # (G, 2 n)
        order = np.argsort(pooled, axis=1, kind="stable")
        size = self.xg.shape[2]
        mval = np.ascontiguousarray(np.take_along_axis(pooled, order, axis=1))
        mcell = np.ascontiguousarray(order % size, dtype=np.int64)
        msrc = np.ascontiguousarray(order // size, dtype=np.uint8)
        cells = np.ascontiguousarray(self.cg[groups], dtype=np.int64)
        zr = np.ascontiguousarray(self.zr[groups], dtype=np.int64)
        ukey = np.ascontiguousarray(self.key[groups], dtype=np.int64)
        nz = int(self.zr[groups].max()) + 1
        # pooled tie groups: runs of tied sorted neighbours (the generic rule), usable when tied end to end
        new = np.ones(mval.shape, dtype=bool)
        new[:, 1:] = ~are_tied(mval[:, 1:], mval[:, :-1], rtol=self.rtol)
        sorted_class = np.cumsum(new, axis=1) - 1
        n_class = sorted_class[:, -1] + 1
        classes = np.empty(mval.shape, dtype=np.int64)
        np.put_along_axis(classes, order, sorted_class, axis=1)
        first = np.flatnonzero(new.ravel())
        last = np.append(first[1:], new.size) - 1
        whole = are_tied(mval.ravel()[last], mval.ravel()[first], rtol=self.rtol)  # each pooled tie group tied end to end
        owner = np.repeat(np.arange(mval.shape[0]), np.bincount(np.flatnonzero(new.ravel()) // mval.shape[1],
                                                                minlength=mval.shape[0]))
        bad = np.bincount(owner[~whole], minlength=mval.shape[0]) > 0
        use = (~bad) & (n_class * nz <= 8 * size)
        n_class = np.where(use, n_class, 0).astype(np.int64)
        classes = np.ascontiguousarray(classes.reshape(-1, 2, size))
        ukr = np.zeros((groups.size, nz), dtype=np.int64)
        np.put_along_axis(ukr, zr, ukey, axis=1)
        return groups, (mval, mcell, msrc, cells, zr, ukey, nz, classes, n_class, ukr)

    def _sweep_inputs(self, i: int, j: int, groups: np.ndarray):
        """The inputs of :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_counts` for the groups ``groups``
        of pair ``(i, j)`` (:meth:`_merged_inputs` of that pair alone)."""
        return tuple(a.copy() for a in self._merged_inputs([(i, j, groups)]))

    def _merged_inputs(self, chunk: list):
        """The sweep's inputs of the groups of the pairs ``chunk`` (``(i, j, groups)`` each), side by side: the two
        metrics' values of each group, sorted once per metric, merged per batch in O(n)
        (:func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_inputs`; kept by :meth:`_sweep_inputs_of`
        within :data:`SWEEP_CACHE_BYTES`)."""
        from metaeval.stats.kernels.kendall.tied_counts import tied_sweep_inputs

        if self._sorted is None:
            order = np.argsort(self.xg, axis=2, kind="stable")
            self._sorted = (np.ascontiguousarray(np.take_along_axis(self.xg, order, axis=2)),
                            np.ascontiguousarray(order, dtype=np.int64),
                            np.ascontiguousarray(self.cg, dtype=np.int64), np.ascontiguousarray(self.zr, dtype=np.int64))
        vals, orders, cells, zr = self._sorted
        first = np.array([i for i, _, _ in chunk], dtype=np.int64)
        second = np.array([j for _, j, _ in chunk], dtype=np.int64)
        ptr = np.cumsum([0] + [groups.size for _, _, groups in chunk]).astype(np.int64)
        groups = np.concatenate([groups for _, _, groups in chunk]).astype(np.int64)
        rows, length = groups.size, 2 * vals.shape[2]
        if self._merge_buffers is None or self._merge_buffers[0].shape[0] < rows:
            self._merge_buffers = tuple(np.empty((max(rows, 2 * (rows // 2 + 1)), length), dtype=t)
                                        for t in (np.float64, np.int64, np.uint8, np.int64, np.uint8, np.uint8))
        out = tuple(a[:rows] for a in self._merge_buffers)  # written whole
        tied_sweep_inputs(vals, orders, (first, second, ptr), groups, cells, zr, self.rtol, NOISE_RTOL, out)
        return out

    @staticmethod
    def _sweep_regions(enew: np.ndarray, near: np.ndarray) -> np.ndarray:
        """The regions of pooled sorted values (G, 2 n) where a tie depends on the mask, ``(group, first, end)``
        (3, R) int64.

        The generic rule ties sorted neighbours of ``X'`` within ``tol(X') = max(rtol spread(X'), NOISE_RTOL
        max|X'|)`` (:mod:`metaeval.stats.correlations.ties`), at most the tolerance ``tol_hi`` of the pooled
        values (``X'`` holds a subset of them). Equal values are tied in any ``X'``; a gap above ``tol_hi`` is
        never a tie. A region is a maximal run of pooled values without such a gap that holds a nonzero gap
        (``near``: a near tie, whose fate depends on ``tol(X')`` and on which values ``X'`` holds); it is
        resolved per resample by :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_corrections`. Under
        ``tie_tolerance=0`` there is none."""
        length = enew.shape[1]
        if not near.any():
            return np.zeros((3, 0), dtype=np.int64)
        sure = (enew != 0) & (near == 0)  # a value opening a segment: no tie across the gap before it
        flat_start = np.flatnonzero(sure.ravel())
        seg = np.cumsum(sure.ravel()) - 1  # segment of each value
        has_near = np.zeros(flat_start.size, dtype=bool)
        has_near[seg[np.flatnonzero(near.ravel())]] = True
        starts = flat_start[has_near]
        ends = np.append(flat_start[1:], enew.size)[has_near]
        return np.stack([starts // length, starts % length, (ends - 1) % length + 1]).astype(np.int64)

    def _padded_bits(self, cache: BatchCache) -> np.ndarray:
        """The batch's swap bits by flat cell, ``(N M, b')`` uint8, ``b'`` the batch's ``b`` resamples rounded up
        to a multiple of :data:`metaeval.stats.kernels.kendall.tied_counts.LANES` (the extra lanes 0, their counts
        dropped): the sweep's lane loops run on whole vectors."""
        from metaeval.stats.kernels.kendall.tied_counts import LANES

        raw = cache.draws.cell_bits(cache.sl).reshape(self.n * self.m, -1)
        out = np.zeros((raw.shape[0], raw.shape[1] + (-raw.shape[1]) % LANES), dtype=np.uint8)
        out[:, :raw.shape[1]] = raw
        return out

    def _swept_tau_b(self, cache: BatchCache, i: int, j: int, groups: np.ndarray) -> np.ndarray:
        """Kendall's tau-b of ``X'`` and ``Y'`` per resample and group, ``(b, G, 2)``, from the counts of
        :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_counts` (tie groups: runs of equal values; near
        ties resolved per resample by :func:`metaeval.stats.kernels.kendall.tied_counts.tied_sweep_corrections`).

        The pair is swept together with the next pairs of :meth:`prepare`'s order not yet swept in this batch
        (up to :data:`SWEEP_PAIRS` pairs and :data:`SWEEP_COUNT_BYTES` of counts): one call of the sweep over all
        their groups, whose counts are those of one call per pair (each group's counts are its own); the other
        pairs' values wait in the batch's cache."""
        ahead = cache.take(("swept-tau-b", id(self), i, j))
        if ahead is not None:
            return ahead
        chunk = [(i, j, groups)]
        if (i, j) in self.index:  # the groups of tied_deltas: self.tied[i, j]
            b = len(range(*cache.sl.indices(cache.draws.n_resamples)))
            room = SWEEP_COUNT_BYTES // (48 * (b + 16)) - groups.size  # groups' counts (b padded) in budget
            for pair in self.pairs[self.index[i, j] + 1:]:
                tied = self.tied.get(pair)
                if len(chunk) == SWEEP_PAIRS or (tied and len(tied) > room):
                    break
                if tied and not cache.has(("swept-tau-b", id(self), *pair)):
                    chunk.append((*pair, np.array(tied, dtype=np.intp)))
                    room -= len(tied)
        values = self._sweep_pairs(cache, chunk)
        for (a, c, _), r in zip(chunk[1:], values[1:]):
            cache.put(("swept-tau-b", id(self), a, c), r)
        return values[0]

    def _sweep_inputs_of(self, chunk: list) -> tuple:
        """The sweep's inputs of the pairs ``chunk`` side by side (``mval, eflat, esrc, ez, enew``, each (G, 2 n)
        with the pairs' groups in turn) and per pair ``(first group, groups, regions, nz)``; kept across
        batches within :data:`SWEEP_CACHE_BYTES`."""
        key = tuple((i, j, groups.tobytes()) for i, j, groups in chunk)
        if key in self._swept:
            return self._swept[key]
        mval, eflat, esrc, ez, enew, near = self._merged_inputs(chunk)  # views of reused buffers
        per_pair, at = [], 0
        for _, _, groups in chunk:
            part = slice(at, at + groups.size)
            per_pair.append((at, groups.size, self._sweep_regions(enew[part], near[part]), int(ez[part].max()) + 1))
            at += groups.size
        stacked = (mval, eflat, esrc, ez, enew)
        nbytes = sum(a.nbytes for a in stacked) + sum(p[2].nbytes for p in per_pair)
        if self._swept_bytes + nbytes <= SWEEP_CACHE_BYTES:  # the same inputs for every batch: kept (copies)
            stacked = tuple(a.copy() for a in stacked)
            self._swept[key] = (stacked, per_pair)
            self._swept_bytes += nbytes
        return stacked, per_pair

    def _sweep_pairs(self, cache: BatchCache, chunk: list) -> list:
        """:meth:`_swept_tau_b` of the pairs ``chunk`` (``(i, j, groups)`` each) from one call of the sweep."""
        from metaeval.stats.kernels.kendall.tied_counts import (groups_per_task, sweep_width, tied_sweep_corrections,
                                                                 tied_sweep_counts)

        (mval, eflat, esrc, ez, enew), per_pair = self._sweep_inputs_of(chunk)
        bits = cache.get("cell-bits-by-cell", lambda: self._padded_bits(cache))  # (N M, b padded)
        b = len(range(*cache.sl.indices(cache.draws.n_resamples)))
        n_counts = bits.shape[1] * eflat.shape[0] * 6
        if self._count_buffer is None or self._count_buffer.size < n_counts:
            self._count_buffer = np.empty(n_counts, dtype=np.int64)
        counts_all = tied_sweep_counts(eflat, esrc, ez, enew, max(p[3] for p in per_pair), bits,
                                       sweep_width(bits.shape[1], eflat.shape[0]),
                                       per_task=groups_per_task(eflat.shape[0]),
                                       out=self._count_buffer[:n_counts].reshape(bits.shape[1], eflat.shape[0], 2, 3))
        size = self.zg.shape[1]
        pairs = size * (size - 1) // 2
        out = []
        for (i, j, groups), (at, n_groups, regions, nz) in zip(chunk, per_pair):
            counts = counts_all[:, at:at + n_groups] if len(chunk) > 1 else counts_all
            if regions.shape[1]:
                counts = np.ascontiguousarray(counts)
                part = slice(at, at + n_groups)
                tied_sweep_corrections(mval[part], eflat[part], esrc[part], ez[part], regions[0], regions[1],
                                       regions[2], nz, bits[:, :b], self.rtol, NOISE_RTOL, counts)
            counts = counts[:b]
            tz = self.tz[groups][None, :, None]
            r = tau_b(counts[..., 0], pairs - counts[..., 1], pairs - tz)
            out.append(np.where(counts[..., 2] > 1, r, np.nan))  # a constant permuted group: NaN (generic path)
        return out

    def _tied_coefficients(self, counts: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """The coefficient of ``X'`` and ``Y'`` per resample and group, ``(b, G, 2)``, from the compiled counts."""
        size = self.zg.shape[1]
        shape = counts.shape[:3]
        if self.spearman:  # Pearson's r of the doubled centred average ranks: exact integer sums
            numer, sumsq = counts[..., 4].astype(np.float64), counts[..., 5].astype(np.float64)
            uu = self.uu[groups][None, :, None]
            with np.errstate(invalid="ignore", divide="ignore"):
                r = np.clip(numer / np.sqrt(sumsq * uu), -1.0, 1.0)
            return np.where((sumsq > 0) & (uu > 0), r, np.nan)
        full = lambda v: np.broadcast_to(np.asarray(v, dtype=np.int64), shape).ravel()  # noqa: E731
        tz = self.tz[groups][None, :, None]
        dz = self.distinct[groups][None, :, None]
        k = (full(size), full(size * (size - 1) // 2), counts[..., 0].ravel(), counts[..., 1].ravel(), full(tz),
             counts[..., 2].ravel(), counts[..., 3].ravel(), full(dz))
        return coefficient_from_counts(self.coefficient, k).reshape(shape)

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        if self.nan:
            return np.full(len(range(*cache.sl.indices(cache.draws.n_resamples))), np.nan)
        return self.tied_deltas(cache, i, j, self.products.evaluate(cache)[self.index[i, j]])

    def tied_deltas(self, cache: BatchCache, i: int, j: int, out: np.ndarray) -> np.ndarray:
        """``out`` (the pair's products over its groups without a metric tie) plus ``r(X'_g) - r(Y'_g)`` of
        each of its tied groups ``g`` per resample, with weight ``1 / #groups used``, added in the order of
        the groups. A resample where a permuted group is constant (its coefficient undefined): under
        ``undefined='zero'`` the group adds 0, as in the generic path; under ``'skip'`` it leaves the mean,
        counted here when every group of the pair is a tied one (each group's coefficient of ``X'`` and
        ``Y'`` is known: the mean over the defined groups), else by the generic path."""
        if not self.tied.get((i, j)):
            return out
        groups = np.array(self.tied[i, j], dtype=np.intp)
        if self.coefficient == "kendall-b":
            r = self._swept_tau_b(cache, i, j, groups)
        else:
            r = self._counted(cache, i, j, groups)
        rare = np.flatnonzero(np.isnan(r).any(axis=(1, 2)))
        grouped = self.level != "global"  # the global level is one group: undefined is NaN
        if rare.size and grouped and self.undefined == "zero":  # an undefined group adds 0, stays in the count
            r = np.where(np.isnan(r), 0.0, r)
            rare = rare[:0]
        # the groups in order: a running (sequential) sum, the same for any batch
        terms = np.concatenate([out[:, None], (r[:, :, 0] - r[:, :, 1]) / self.n_agg], axis=1)
        out = np.cumsum(terms, axis=1)[:, -1]
        if rare.size:
            if grouped and groups.size == self.defined_groups.size:
                out[rare] = self._skip_means(r[rare], groups)
            else:  # the groups without a tie are not counted per resample: the generic path
                out[rare] = self._generic(cache, i, j, rare)
        return out

    def _skip_means(self, r: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """``mean(X') - mean(Y')`` over each one's defined groups, from every group's coefficients ``r``
        (rows, G', 2), summed as the generic path sums (all groups in order, the undefined ones as 0)."""
        full = np.full((r.shape[0], 2, self.weight.size), np.nan)
        full[:, :, groups] = r.transpose(0, 2, 1)
        defined = ~np.isnan(full)
        n_used = defined.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            stat = np.where(n_used > 0, np.where(defined, full, 0.0).sum(axis=-1) / n_used, np.nan)
        return stat[:, 0] - stat[:, 1]

    def _counted(self, cache: BatchCache, i: int, j: int, groups: np.ndarray) -> np.ndarray:
        """The coefficients of ``X'`` and ``Y'`` of the pair's tied groups per resample, ``(b, G, 2)``: small
        groups from their mask tables (:mod:`metaeval.stats.kernels.kendall.mask_tables`), the others counted per
        resample (:func:`metaeval.stats.kernels.kendall.group_counts.tied_group_counts`)."""
        from metaeval.stats.kernels.kendall.mask_tables import MaskTables

        size = self.xg.shape[2]
        if not MaskTables.applicable(self.coefficient, size, cache.draws.n_resamples):
            return self._loop(cache, i, j, groups)
        if self._tables is None:
            self._tables = MaskTables(self.coefficient, size, self.tz, self.distinct, self.zr, self.rtol)

        def make():
            tabulated, cls, n_class = self._tables.classes(self._tied_inputs(i, j)[1])
            return tabulated, self._tables.build(groups[tabulated], cls, n_class)

        tabulated, table = self._tables.get((i, j), make)
        index = self._mask_index(cache)[:, groups[tabulated]]
        r = np.empty((index.shape[0], groups.size, 2))
        r[:, tabulated] = MaskTables.look_up(table, index, size)
        if not tabulated.all():
            r[:, ~tabulated] = self._loop(cache, i, j, groups[~tabulated])
        return r

    def _mask_index(self, cache: BatchCache) -> np.ndarray:
        """Each resample's swap mask of each group, ``(b, G)`` (bit ``c``: the group's cell ``c``)."""
        from metaeval.stats.kernels.kendall.mask_tables_compiled import mask_index

        return cache.get(f"mask-index-{self.level}", lambda: mask_index(
            self._bits_by_resample(cache), np.ascontiguousarray(self.cg, dtype=np.int64)))

    def _bits_by_resample(self, cache: BatchCache) -> np.ndarray:
        return cache.get("cell-bits-by-resample", lambda: np.ascontiguousarray(
            cache.draws.cell_bits(cache.sl).reshape(self.n * self.m, -1).T))  # (b, N M)

    def _loop(self, cache: BatchCache, i: int, j: int, groups: np.ndarray) -> np.ndarray:
        """The coefficients of the groups ``groups`` counted per resample by the compiled loop."""
        from metaeval.stats.kernels.kendall.group_counts import tied_group_counts

        groups, args = self._tied_inputs(i, j, groups)
        counts = tied_group_counts(args[:4], *args[4:7], args[7:], self._bits_by_resample(cache), self.rtol, self.spearman)
        return self._tied_coefficients(counts, groups)

    def _generic(self, cache: BatchCache, i: int, j: int, rows: np.ndarray) -> np.ndarray:
        """``delta`` of the resamples ``rows`` of the batch by the generic path (materialised ``X'``, ``Y'``)."""
        from metaeval.stats.correlations.levels import level_correlation

        mask = cache.draws.mask(cache.sl)[rows]
        zb = np.broadcast_to(self.z, mask.shape)
        kw = dict(level=self.level, coefficient=self.coefficient, undefined=self.undefined, rtol=self.rtol)
        return (level_correlation(np.where(mask, self.std[j], self.std[i]), zb, **kw).statistic
                - level_correlation(np.where(mask, self.std[i], self.std[j]), zb, **kw).statistic)
