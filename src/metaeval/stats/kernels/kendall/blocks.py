"""Summary-level Kendall tau-b of every metric pair whose metrics tie within inputs (PERM-BOTH): block tables.

For each such pair and input the four counts ``S(X')``, ``S(Y')``, ``T(X')``, ``T(Y')`` (numerators and tied pairs
of the permuted metrics) of every resample come from ``B (B - 1) / 2`` table reads
(:mod:`metaeval.stats.kernels.kendall.blocks_compiled`); ``tau_b(X'_b) - tau_b(Y'_b)`` is then
``S(X') / sqrt((n0 - T(X')) (n0 - Tz_b)) - S(Y') / sqrt((n0 - T(Y')) (n0 - Tz_b))``, ``n0 = N (N - 1) / 2``, added
over the inputs in a fixed order with weight ``1 / #inputs used`` (the mean over the inputs where the human is not
constant, or over all under ``undefined='zero'``). A pair whose metrics tie within at most :data:`FULL_SHARE` of
those inputs keeps the exact integer products of
:class:`metaeval.stats.kernels.kendall.summary_pairs.SummaryPairsShared` for its other inputs and counts only its
tied inputs with the tables, one pair at a time; the others count every input with the tables, 16 pairs side by
side. Both run in one compiled loop (:mod:`metaeval.stats.kernels.kendall.lanes_compiled`, lanes of 16 pairs as
vector code, or of one); a pair's sums do not depend on the lanes, the other pairs of its batch or the block plan.
Under ``undefined='skip'`` an input where a permuted metric is constant (its tau-b undefined) leaves that metric's
mean, so the divisor changes per resample: for a pair that counts every input with the tables and can be constant
somewhere, the kernel keeps the sums of ``X'`` and ``Y'`` and the number of constant inputs of each (``T = n0``),
and ``delta`` is ``sum_x / (n - u_x) - sum_y / (n - u_y)``
over the inputs used (NaN when none is left), as the generic path computes it. The rest is left to the paths the
kernels already had:

* an input holding a *near* tie of the pair's values (a nonzero gap within the tie tolerance, whose fate depends
  on the spread of each ``X'``) is counted per resample by
  :class:`metaeval.stats.kernels.kendall.group_pairs.GroupPairsCompiled` (the generic tie rule per resample);
* a resample where a permuted input is constant under ``undefined='skip'`` in a pair counted one at a time, or
  in a pair with a near tie, is computed by the generic path (materialised ``X'``, ``Y'``).

The tables are built once per pair, input and chunk of resamples, so the kernel computes all resamples of the
draws at its first batch (chunks of at most :data:`CHUNK_BYTES` of table indices) and keeps the deltas,
``(pairs, k)`` floats; every resample's sum is formed in the same order whatever the batch or the threads.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.ties import NOISE_RTOL, TIE_RTOL
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared, human_weights

__all__ = ["CHUNK_BYTES", "FULL_SHARE", "MAX_SYSTEMS", "KendallBlockPairs", "block_plan"]

MAX_SYSTEMS = 32
"""Most systems the tables take (blocks of at most 8 systems, 16-bit packed counts beyond 16 systems)."""

FULL_SHARE = 0.5
"""A pair whose metrics tie within more than this share of the inputs counts all its inputs with the tables
(building the integer products of its few tie-free inputs would cost more than counting them)."""

CHUNK_BYTES = 1 << 26
"""Most bytes of table indices (inputs x tables x resamples) held at once; more resamples are done in chunks."""

# the cost of building one table entry relative to one table read per resample, measured on one core: a pair at a
# time (a lane of one) about 0.5 ns per entry and 0.6 ns per read; 16 pairs in lanes about 4.4 ns per entry (16
# counts) and 0.5 ns per read (one vector load and add, compiler/intrinsics.py; each resample's unpacking and
# weights, about 20 ns, do not depend on the plan)
_ENTRY_COST = 0.8
_LANE_ENTRY_COST = 9.0


def block_plan(n: int, resamples: int, entry_cost: float = _ENTRY_COST):
    """``(sizes, tables)``: the split of ``n`` systems into blocks of consecutive systems (sizes as equal as
    possible, at most 8) and the table of each pair of blocks ``g < h``, chosen to minimise about
    ``resamples x tables + entry_cost x entries`` per pair and input (the reads of the resamples against building
    the ``sum 2^(s_g + s_h)`` entries; one pair at a time by default, 16 in lanes with ``_LANE_ENTRY_COST``)."""
    best = None
    for count in range(2, n + 1):
        sizes = [n // count + (1 if g < n % count else 0) for g in range(count)]
        if max(sizes) > 8:
            continue
        tables = [(g, h) for g in range(count) for h in range(g + 1, count)]
        cost = resamples * len(tables) + entry_cost * sum(1 << (sizes[g] + sizes[h]) for g, h in tables)
        if best is None or cost < best[0]:
            best = (cost, sizes, tables)
    return best[1], best[2]


class KendallBlockPairs:
    """Summary-level Kendall tau-b of the metric pairs whose metrics tie within inputs, under PERM-BOTH with
    complete data and at most :data:`MAX_SYSTEMS` systems (module docstring).

    Parameters
    ----------
    std : (P, N, M) standardized metric scores; z : (N, M) human scores
    undefined : ``"skip"`` or ``"zero"``, as in ``level_correlation``
    tied : ``{(i, j): inputs}`` where the pair's metrics may tie (:func:`metaeval.stats.kernels.kendall.summary_pairs.tied_groups`)
    rtol : the relative tie tolerance
    """

    @staticmethod
    def applicable(n: int, m: int) -> bool:
        """3 to :data:`MAX_SYSTEMS` systems (one byte per packed count up to 16 systems, two beyond), and the
        integer products of the tie-free inputs exact (:meth:`SummaryPairsShared.applicable`)."""
        return 3 <= n <= MAX_SYSTEMS and SummaryPairsShared.applicable(n, m)

    def __init__(self, std: np.ndarray, z: np.ndarray, undefined: str, tied: dict, *, rtol: float = TIE_RTOL):
        p, n, m = std.shape
        self.std, self.z, self.undefined = std, z, undefined
        self.p, self.n, self.m = p, n, m
        self.rtol = rtol
        key, tz, _, _ = human_weights(z.T, "kendall-b")
        self.zr = np.ascontiguousarray(key, dtype=np.int64)  # (M, N) the human's dense ranks
        n0 = n * (n - 1) // 2
        self.defined = tz < n0  # the human orders some pair of the input
        self.n_agg = int(self.defined.sum()) if undefined == "skip" else m
        self.nan = undefined == "skip" and self.n_agg == 0
        t = np.arange(n0 + 1, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            scales = 1.0 / np.sqrt((n0 - t)[None, :] * (n0 - tz)[:, None]) / max(self.n_agg, 1)
        scales[:, n0] = np.nan if undefined == "skip" else 0.0  # a constant permuted input
        scales[~self.defined] = 0.0
        self.scales = np.ascontiguousarray(scales)
        self.tied = dict(tied)
        self.shift = 8 if n <= 16 else 16
        self.cells = n * m // 4 + 8 * p  # the batch of the other kernels is unchanged (see the module doc)
        self._draws = None

    def prepare(self, pairs) -> None:
        """The inputs each pair counts with the tables (its tied inputs, or every input beyond
        :data:`FULL_SHARE`), and the shared products of the others' tie-free inputs."""
        self.pairs = list(pairs)
        self.index = {pair: q for q, pair in enumerate(self.pairs)}
        used = np.flatnonzero(self.defined)
        lists, partial = [], {}
        for pair in self.pairs:
            inputs = np.asarray(self.tied.get(pair, []), dtype=np.int64)
            if inputs.size > 1 and not (inputs[1:] > inputs[:-1]).all():
                inputs = np.unique(inputs)  # ascending, once each
            inputs = inputs[self.defined[inputs]]
            if inputs.size > FULL_SHARE * used.size:
                inputs = used
            else:
                partial[pair] = inputs.tolist()
            lists.append(inputs)
        self.lists = lists
        self.partial = partial
        self.linear = None
        if partial:
            self.linear = SummaryPairsShared(self.std, self.z, "kendall-b", self.undefined)
            self.linear.tied = partial  # its products leave these inputs out (counted here)
            self.linear.prepare(list(partial))
        self.products = self.linear.products if self.linear is not None else _Exact()

    def covers(self, i: int, j: int) -> bool:
        """Whether pair ``(i, j)`` was prepared."""
        return (i, j) in self.index

    def _compute(self, draws) -> None:
        """Every resample's table part of every pair (``self.acc``), the near-tie inputs per pair, by one compiled
        loop (:func:`metaeval.stats.kernels.kendall.lanes_compiled.lane_tau_b_sums`) called twice: the pairs that
        count every input in lanes of :data:`LANES` pairs (untracked batches, then tracked: their permuted input can
        be constant under skip), the pairs that count only their tied inputs in lanes of one (a pair at a time, a
        plan of fewer, larger tables; weight NaN where a permuted input is constant under skip: those resamples go
        to the generic path)."""
        from metaeval.stats.kernels import parts as kernel_parts
        from metaeval.stats.kernels.kendall.lanes_compiled import LANES, constant_possible, lane_tau_b_sums

        k = draws.n_resamples
        n0 = self.n * (self.n - 1) // 2
        lens = np.array([len(v) for v in self.lists], dtype=np.int64)
        ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        groups = np.concatenate([np.zeros(0, dtype=np.int64)] + [np.asarray(v, dtype=np.int64) for v in self.lists])
        first = np.array([i for i, _ in self.pairs], dtype=np.int64)
        second = np.array([j for _, j in self.pairs], dtype=np.int64)
        xt = np.ascontiguousarray(self.std.transpose(0, 2, 1))  # (P, M, N)
        lane = np.array([self.pairs[q] not in self.partial for q in range(len(self.pairs))], dtype=bool)
        # the pairs that count every input: in lanes, those whose permuted input can be constant (under skip)
        # tracked, in batches of their own
        tracked = np.zeros(len(self.pairs), dtype=bool)
        if self.undefined == "skip" and lane.any():
            can = np.zeros((len(self.pairs), self.m), dtype=np.bool_)
            kernel_parts.run_parts(lambda lo, hi: constant_possible(xt, first[lo:hi], second[lo:hi], can[lo:hi]),
                                   _ranges(len(self.pairs), kernel_parts.threads()))
            tracked = lane & can[:, self.defined].any(axis=1)
        every = self.scales.copy()
        every[:, n0] = 0.0  # a constant permuted input: counted (tracked) or impossible
        calls = []  # (lanes of each batch, which batches are tracked, weights, block-plan cost)
        wide = [order[lo:lo + LANES] for order in (np.flatnonzero(lane & ~tracked), np.flatnonzero(tracked))
                for lo in range(0, order.size, LANES)]
        if wide:
            calls.append((_lanes(wide, LANES, first, second), np.array([bool(tracked[b].any()) for b in wide]),
                          every, _LANE_ENTRY_COST))
        narrow = [np.array([q]) for q in np.flatnonzero(~lane)]
        if narrow:
            calls.append((_lanes(narrow, 1, first, second), np.zeros(len(narrow), dtype=np.bool_), self.scales,
                          _ENTRY_COST))
        self.acc = np.zeros((len(self.pairs), k))
        width = k if tracked.any() else 0
        self.acc_x, self.acc_y = np.zeros((len(self.pairs), width)), np.zeros((len(self.pairs), width))
        self.und_x = np.zeros((len(self.pairs), width), dtype=np.int32)
        self.und_y = np.zeros((len(self.pairs), width), dtype=np.int32)
        self.tracked = tracked
        near = np.zeros(groups.size, dtype=np.uint8)
        kind = np.zeros(1, dtype=np.int32 if self.shift == 8 else np.int64)
        chunk = max(64, CHUNK_BYTES // (self.m * sum(_index_bytes(*block_plan(self.n, k, c[3])) for c in calls)))
        for lo in range(0, k, chunk):
            hi = min(k, lo + chunk)
            bits = draws.cell_bits(slice(lo, hi))  # (M, N, b)
            parts = [np.zeros((len(self.pairs), hi - lo))] + [
                np.zeros((len(self.pairs), (hi - lo) if width else 0), dtype=a.dtype)
                for a in (self.acc_x, self.acc_y, self.und_x, self.und_y)]
            for (lane_pair, lane_first, lane_second), track, scales, cost in calls:
                plan = _Layout(self.m, bits, *block_plan(self.n, hi - lo, cost))

                def part(sel, lane_pair=lane_pair, lane_first=lane_first, lane_second=lane_second, track=track,
                         scales=scales, plan=plan):  # batches sel: disjoint pairs, so disjoint rows and flags
                    lane_tau_b_sums(xt, (lane_pair[sel], lane_first[sel], lane_second[sel], ptr, groups), self.zr,
                                    scales, (float(self.rtol), NOISE_RTOL, self.shift), plan.arrays[:6],
                                    plan.arrays[6], track[sel], n0, tuple(parts), near, kind)

                kernel_parts.run_parts(part, [(sel,) for sel in _dealt(lane_pair, lens, kernel_parts.threads())])
            del bits
            self.acc[:, lo:hi] = parts[0]
            if width:
                for whole, part in zip((self.acc_x, self.acc_y, self.und_x, self.und_y), parts[1:]):
                    whole[:, lo:hi] = part
        self.near = {}
        for q, pair in enumerate(self.pairs):
            flagged = np.flatnonzero(near[ptr[q]:ptr[q + 1]])
            if flagged.size:
                self.near[pair] = [int(groups[ptr[q] + u]) for u in flagged]
        self.fallback = None
        if self.near:
            from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

            self.fallback = GroupPairsCompiled(self.std, self.z, "kendall-b", self.undefined, "summary", self.near,
                                               rtol=self.rtol)
        self._draws = draws

    def deltas(self, cache: BatchCache, i: int, j: int) -> np.ndarray:
        sl = cache.sl
        if self.nan:
            return np.full(len(range(*sl.indices(cache.draws.n_resamples))), np.nan)
        if self._draws is not cache.draws:
            self._compute(cache.draws)
        q = self.index[i, j]
        out = self.acc[q, sl].copy()
        decided = np.zeros(out.size, dtype=bool)
        if self.tracked[q]:  # inputs where X' or Y' is constant leave their mean (under skip)
            gone_x, gone_y = self.und_x[q, sl], self.und_y[q, sl]
            rows = np.flatnonzero((gone_x > 0) | (gone_y > 0))
            if rows.size and (i, j) in self.near:
                out[rows] = np.nan  # with the near-tie inputs: the generic path below
            elif rows.size:
                left_x, left_y = self.n_agg - gone_x[rows], self.n_agg - gone_y[rows]
                with np.errstate(divide="ignore", invalid="ignore"):
                    r_x = np.where(left_x > 0, self.acc_x[q, sl][rows] * self.n_agg / left_x, np.nan)
                    r_y = np.where(left_y > 0, self.acc_y[q, sl][rows] * self.n_agg / left_y, np.nan)
                out[rows] = r_x - r_y
                decided[rows] = True  # NaN there: every input of X' or Y' constant, as the generic path says
        if self.linear is not None and self.linear.covers(i, j):
            out = self.linear.deltas(cache, i, j) + out
        if self.fallback is not None and (i, j) in self.near:
            out = self.fallback.tied_deltas(cache, i, j, out)
        rare = np.flatnonzero(np.isnan(out) & ~decided)
        if rare.size and self.undefined == "skip":  # a permuted input constant where the counts cannot tell
            out[rare] = self._generic(cache, i, j, rare)
        return out

    def _generic(self, cache: BatchCache, i: int, j: int, rows: np.ndarray) -> np.ndarray:
        """``delta`` of the resamples ``rows`` of the batch by the generic path (materialised ``X'``, ``Y'``)."""
        from metaeval.stats.correlations.levels import level_correlation

        mask = cache.draws.mask(cache.sl)[rows]
        zb = np.broadcast_to(self.z, mask.shape)
        kw = dict(level="summary", coefficient="kendall-b", undefined=self.undefined)
        return (level_correlation(np.where(mask, self.std[j], self.std[i]), zb, **kw).statistic
                - level_correlation(np.where(mask, self.std[i], self.std[j]), zb, **kw).statistic)


def _ranges(size: int, threads: int) -> list:
    """``(lo, hi)`` of ``threads`` consecutive ranges of about equal length covering ``range(size)``."""
    cuts = np.linspace(0, size, min(threads, max(size, 1)) + 1).astype(int)
    return [(int(lo), int(hi)) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]


def _dealt(lane_pair: np.ndarray, work: np.ndarray, threads: int) -> list:
    """The batches (rows of ``lane_pair``) dealt to ``threads`` parts of about equal work (``work[p]``: the inputs
    pair ``p`` lists): the heaviest first, in turn. Which thread computes a batch does not change its sums."""
    cost = np.where(lane_pair >= 0, work[np.maximum(lane_pair, 0)], 0).sum(axis=1)
    order = np.argsort(-cost, kind="stable")
    return [order[i::threads] for i in range(min(threads, order.size))]


def _lanes(batches: list, lanes: int, first: np.ndarray, second: np.ndarray) -> tuple:
    """``(lane_pair, lane_first, lane_second)`` of ``batches`` (each an array of pair indices) in ``lanes`` lanes,
    -1 (metrics 0) in an empty lane."""
    lane_pair = np.full((len(batches), lanes), -1, dtype=np.int64)
    for b, members in enumerate(batches):
        lane_pair[b, :members.size] = members
    safe = np.maximum(lane_pair, 0)
    return (lane_pair, np.where(lane_pair >= 0, first[safe], 0), np.where(lane_pair >= 0, second[safe], 0))


def _index_bytes(sizes: list, tables: list) -> int:
    """Bytes of the table indices of one input and resample under a block plan (uint16 entries where they fit)."""
    return len(tables) * (2 if sum(1 << (sizes[g] + sizes[h]) for g, h in tables) <= 1 << 16 else 4)


class _Layout:
    """The arrays the compiled loops take for one block plan and chunk of resamples: ``arrays`` = (first system and
    size of each block, the two blocks and first entry of each table, the table that owns each block's terms, the
    table entries every resample reads at every input (:func:`blocks_compiled.block_indices`)); ``entries`` in all."""

    def __init__(self, m: int, bits: np.ndarray, sizes: list, tables: list):
        from metaeval.stats.kernels import parts
        from metaeval.stats.kernels.kendall.blocks_compiled import block_indices

        first_sys = np.cumsum([0] + sizes[:-1]).astype(np.int64)
        size = np.array(sizes, dtype=np.int64)
        tf = np.array([g for g, _ in tables], dtype=np.int64)
        ts = np.array([h for _, h in tables], dtype=np.int64)
        entries = np.array([1 << (sizes[g] + sizes[h]) for g, h in tables], dtype=np.int64)
        offset = np.concatenate([[0], np.cumsum(entries)[:-1]]).astype(np.int64)
        owner = np.array([next(t for t, (g, h) in enumerate(tables) if b in (g, h)) for b in range(len(sizes))],
                         dtype=np.int64)
        self.entries = int(entries.sum())
        idx = np.empty((m, len(tables), bits.shape[2]), dtype=np.uint16 if self.entries <= 1 << 16 else np.uint32)
        parts.run_parts(lambda lo, hi: block_indices(bits[lo:hi], first_sys, size, tf, ts, offset, idx[lo:hi]),
                        _ranges(m, parts.threads()))
        self.arrays = (first_sys, size, tf, ts, offset, owner, idx)


class _Exact:
    """``products.exact`` of a kernel without integer products (every count here is an exact integer)."""

    exact = True
