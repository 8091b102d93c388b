"""Summary-level bootstrap over many inputs (BOOT-SYSTEMS / BOOT-BOTH): inputs in chunks, resamples in rows.

The kernels of :mod:`metaeval.stats.kernels.bootstrap` hold, per resample, a few numbers per input (and for
Spearman ``N`` per input), so with 100,000 inputs a batch of their cell budget is one to five resamples, each a
matrix-vector product that reads hundreds of megabytes: the summary level of 20 systems x 100,000 inputs took
minutes per coefficient, and Spearman (beyond :data:`~metaeval.stats.kernels.bootstrap.SPEARMAN_KERNEL_MAX`) fell
back to sorting every resample. Here a batch of resamples walks the inputs in fixed chunks of :data:`CHUNK`;
per chunk the per-input correlations of every resample come from compiled loops over the tie groups (resamples
innermost, so the loops vectorise), and the count-weighted sums of the aggregate are accumulated chunk by chunk.

Per input ``j`` and resample with system multiplicities ``w`` (``N = sum_a w_a``), exactly in integers:

- Spearman: the resampled average rank of system ``a`` is ``(V_a + 1) / 2`` with ``V_a = 2 B_g + W_g`` for its
  tie group ``g`` (``W_g`` the weight of the group, ``B_g`` that of the groups below), and
  ``4 S_xz = sum_a w_a V^x_a V^z_a - N^3`` (likewise ``S_xx = sum_g W_g V_g^2 - N^3``): the sums of
  :class:`~metaeval.stats.kernels.bootstrap.BootSummarySpearman`, by another order of exact integer additions.
- Kendall tau-b: the numerator ``sum_{a<b} w_a w_b s^x_ab s^z_ab`` is one float32 product per chunk (exact small
  integers, as in :class:`~metaeval.stats.kernels.bootstrap.BootSummaryKendall`; the signs are kept as one byte
  per input and pair); the pairs tied in x are ``(sum_g W_g^2 - N) / 2`` (copies of a system included).
- Pearson: the weighted centred moments ``sum_a w_a (x, z, x^2, z^2, x z)_a`` in float64, then the formula of
  :class:`~metaeval.stats.kernels.bootstrap.BootSummaryPearson`; an input is undefined where the chosen systems
  are one group of near-equal values (decided by :func:`metaeval.stats.correlations.ties.is_constant`).

The Spearman and Kendall sums are exact integers, kept in float32 (16 lanes a vector instead of 8) while every
one stays below 2^24 (``4 N^3`` and ``N^2``: up to 161 systems for Spearman), else in float64: the same values.
A batch is split into parts of resamples run on :func:`~metaeval.stats.kernels.parts.threads` threads (the loops
release the GIL); each resample is computed by the same operations in the same order in any part, so neither the
thread count nor the batch changes a value. The per-input tie groups of a read-only matrix (a
:class:`~metaeval.data.scoreset.ScoreSet`'s) are kept for the next cell (a table's human, a metric's for Spearman
and Kendall).

Per-input values are those of the kernels (bitwise for the rank coefficients; Pearson's moments are summed in
another order, within rounding); the aggregate adds chunk sums, so it differs from a single sum over all inputs
by rounding only, and does not depend on the batch. Compiled with numba (imported on first use); without numba
:func:`summary_inputs_kernel` returns None and the kernels of :mod:`~metaeval.stats.kernels.bootstrap` are used.
"""
from __future__ import annotations

import weakref

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.batch import KERNEL_BATCH_CELLS, BatchCache
from metaeval.stats.kernels import compiler
from metaeval.stats.kernels.ranks import near_constant_groups, rank_pair_signs, tie_ranks, upper_pairs
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["CHUNK", "MIN_INPUTS", "summary_inputs_kernel"]

#: Inputs per chunk: the per-chunk temporaries of a batch of :data:`BATCH` resamples stay in cache.
CHUNK = 4096
#: Resamples per batch (innermost in the compiled loops).
BATCH = 64
#: From this many inputs on the summary level of BOOT-SYSTEMS / BOOT-BOTH uses these kernels.
MIN_INPUTS = 4096
#: Rank sums in float32 where they are exact (False: float64 throughout; the same values either way).
EXACT32 = True


def _loops():
    """The compiled loops (:mod:`metaeval.stats.kernels.many_inputs.summary_bootstrap_compiled`, imported on first use)."""
    from metaeval.stats.kernels.many_inputs import summary_bootstrap_compiled as compiled_inputs

    return compiled_inputs


_MEMO: dict = {}
#: Per-input tie groups kept (a table's human and metrics, for its rank coefficients and Pearson).
_MEMO_ENTRIES = 8


def _kept(kind: str, values: np.ndarray, rtol, make):
    """``make()``, kept for ``values`` when nobody can change that array (a :class:`~metaeval.data.scoreset.ScoreSet`'s,
    as :mod:`~metaeval.stats.kernels.many_inputs.system_sums` keeps its sums): the cells of a table share the human's tie groups,
    and Spearman and Kendall a metric's. The array is referred to weakly; the results are read-only."""
    from metaeval.stats.kernels.many_inputs.system_sums import frozen

    if not frozen(values) or _MEMO_ENTRIES <= 0:
        return make()
    key = (kind, id(values), rtol)
    hit = _MEMO.pop(key, None)
    if hit is not None and hit[0]() is values:  # a weak reference: a new array with a dead one's id is not it
        _MEMO[key] = hit  # the most recently used last
        return hit[1]
    while len(_MEMO) >= _MEMO_ENTRIES:
        _MEMO.pop(next(iter(_MEMO)))  # the least recently used
    result = make()
    for part in result:
        if isinstance(part, np.ndarray):
            part.setflags(write=False)
    _MEMO[key] = (weakref.ref(values), result)
    return result


def _dense_ranks(values: np.ndarray, rtol) -> tuple[np.ndarray, np.ndarray]:
    """Dense tie-group ranks (M, N) int8/int16 of every input (column of ``values`` (N, M)), by the tie rule of
    :func:`~metaeval.stats.kernels.ranks.tie_ranks`, and the number of groups per input (kept, see :func:`_kept`)."""

    def make():
        ranks, _ = tie_ranks(np.ascontiguousarray(values.T), rtol=rtol)
        return np.ascontiguousarray(ranks), (ranks.max(axis=1).astype(np.int64) + 1)

    return _kept("ranks", values, rtol, make)


def _counts_of(cache: BatchCache):
    """The input counts of the batch, (b, M) (the one-byte counts themselves when the draws keep them), or None
    when the inputs are not resampled."""
    draws = cache.draws
    if draws.cols is None:
        return None
    kept = getattr(draws.cols, "counts", None)  # RegeneratedDraws: uint8 (int32 past 255) counts, no copy
    return kept[cache.sl] if kept is not None else cache.col_weights()


class _Chunked:
    """Shared walk: a batch of resamples, the inputs chunk by chunk, the aggregate summed in the compiled loops.

    A batch is split into :func:`~metaeval.stats.kernels.parts.threads` parts of at most :data:`BATCH` resamples
    (columns), each walked over all inputs in its own thread with its own state (the loops release the GIL).
    Every resample is computed by the same operations in the same order whatever the part it falls in (the
    per-part decisions, such as Pearson's ``fewest``, only skip work that cannot change a result), so the
    values do not depend on the thread count or the batch.
    """

    def __init__(self, x, z, undefined: str):
        self.n, self.m = x.shape
        self.skip = undefined == "skip"
        self.loops = _loops()
        self.threads = parts.threads()
        #: Cells per resample as the batch size sees them, so that a batch is :data:`BATCH` resamples per thread
        #: (the input counts of a part, ``M x BATCH``, are its largest array; the loops' temporaries are
        #: ``N x BATCH``).
        self.cells = max(1, KERNEL_BATCH_CELLS // (BATCH * self.threads))

    def evaluate(self, cache: BatchCache) -> np.ndarray:
        w = cache.row_weights()
        counts = _counts_of(cache)
        b = w.shape[0]
        n_parts = max(1, min(self.threads, -(-b // 8)))  # at least 8 resamples a part
        bounds = [b * i // n_parts for i in range(n_parts + 1)]
        pieces = [(w[lo:hi], None if counts is None else counts[lo:hi], self.buffers(hi - lo, counts))
                  for lo, hi in zip(bounds[:-1], bounds[1:])]
        return np.concatenate(parts.run_parts(self._part, pieces))

    def buffers(self, b: int, counts) -> dict:
        """The larger arrays of a part of ``b`` resamples, allocated by the thread that splits the batch: glibc
        keeps a thread's freed memory in that thread's own arena, so arrays allocated in the pool's threads would
        add to the peak memory instead of reusing the main thread's."""
        return {"counts": None if counts is None else np.empty((self.m, b), dtype=counts.dtype)}

    def _part(self, w, counts, buffers) -> np.ndarray:
        """The statistic of the resamples of ``w`` (b, N) with input counts ``counts`` (b, M) or None."""
        b = w.shape[0]
        wt = np.ascontiguousarray(w.T, dtype=np.float64)  # (N, b): resamples innermost
        has_counts = counts is not None
        cnt = np.zeros((1, b), dtype=np.uint8)
        if has_counts:  # (M, b): resamples innermost
            cnt = buffers["counts"]
            np.copyto(cnt, counts.T)
        total = np.zeros((2, b))  # the sums and their compensations
        used = np.zeros(b)
        state = self.start(wt, buffers)
        for j0 in range(0, self.m, CHUNK):
            self.chunk(state, wt, min(self.m, j0 + CHUNK), j0, cnt, has_counts, total, used)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(used > 0, (total[0] + total[1]) / np.maximum(used, 1), np.nan)

    def start(self, wt, buffers):
        """Per-part preparation: the state passed to every chunk of the part (none by default)."""
        return None


class SpearmanInputs(_Chunked):
    """Summary-level Spearman (see the module docstring)."""

    def __init__(self, x, z, undefined, rtol):
        super().__init__(x, z, undefined)
        self.rx, self.gx = _dense_ranks(x, rtol)
        self.rz, self.gz = _dense_ranks(z, rtol)

    def start(self, wt, buffers):
        return wt.astype(np.float32) if EXACT32 and 4 * self.n ** 3 < 2 ** 24 else wt

    def chunk(self, state, wt, j1, j0, counts, has_counts, total, used):
        n, b = wt.shape
        wt = state
        work = [np.empty((n + 1, b), wt.dtype) for _ in range(3)] + [np.empty(b, wt.dtype) for _ in range(3)]
        self.loops.spearman_inputs(wt, (self.rx, self.rz, self.gx, self.gz), (j0, j1), (counts, has_counts, self.skip),
                                   (*work, np.empty(b), np.zeros(b, dtype=np.int64)), (total, used))


class KendallInputs(_Chunked):
    """Summary-level Kendall tau-b (see the module docstring)."""

    def __init__(self, x, z, undefined, rtol):
        super().__init__(x, z, undefined)
        n, m = x.shape
        self.rx, self.gx = _dense_ranks(x, rtol)
        self.rz, self.gz = _dense_ranks(z, rtol)
        first, second = upper_pairs(n)
        self.signs = np.empty((m, first.size), dtype=np.int8)  # s^x s^z of every input and pair, one byte each
        for j0 in range(0, m, CHUNK):
            j1 = min(m, j0 + CHUNK)
            sx = rank_pair_signs(self.rx[j0:j1], first, second)
            sz = rank_pair_signs(self.rz[j0:j1], first, second)
            np.multiply(sx, sz, out=self.signs[j0:j1].T)
        self.first, self.second = first, second
        self.n0 = n * (n - 1) / 2.0

    def buffers(self, b, counts):
        return {**super().buffers(b, counts), "signs": np.empty((CHUNK, self.first.size), dtype=np.float32),
                "num": np.empty((CHUNK, b), dtype=np.float32)}

    def start(self, wt, buffers):
        ww = np.ascontiguousarray((wt[self.first] * wt[self.second]), dtype=np.float32)  # (P, b), exact
        return ww, (wt.astype(np.float32) if EXACT32 and self.n ** 2 < 2 ** 24 else wt), buffers

    def chunk(self, state, wt, j1, j0, counts, has_counts, total, used):
        ww, wt, buffers = state
        n, b = wt.shape
        signs = buffers["signs"][: j1 - j0]
        np.copyto(signs, self.signs[j0:j1])
        num = np.matmul(signs, ww, out=buffers["num"][: j1 - j0])  # (chunk, b): exact small integers in float32
        work = (np.empty((n, b), wt.dtype), np.empty(b, wt.dtype), np.empty(b, wt.dtype), np.empty(b),
                np.zeros(b, dtype=np.int64))
        self.loops.kendall_inputs(wt, num, (self.rx, self.rz, self.gx, self.gz), self.n0, (j0, j1),
                                  (counts, has_counts, self.skip), tuple(work), (total, used))


class PearsonInputs(_Chunked):
    """Summary-level Pearson (see the module docstring)."""

    def __init__(self, x, z, undefined, rtol=TIE_RTOL):  # Pearson does not rank: rtol is not used
        super().__init__(x, z, undefined)
        self.x, self.z = x, z
        self.xc = np.ascontiguousarray((x - x.mean(axis=0)).T)  # (M, N)
        self.zc = np.ascontiguousarray((z - z.mean(axis=0)).T)
        self.tx, self.rx, self.gx, self.bx = _kept("near", x, None, lambda: self._tied(x))
        self.tz, self.rz, self.gz, self.bz = _kept("near", z, None, lambda: self._tied(z))

    def _tied(self, values):
        """The inputs where a subset of two or more systems can be constant (the near-tie groups of
        :func:`~metaeval.stats.kernels.ranks.near_constant_groups`): per input its row in the group ranks or -1, the dense group
        ranks (k, N), the number of groups of each row and the size of its largest group."""
        moments, cols, _ = near_constant_groups(values)
        k = cols.size
        row = np.full(self.m, -1, dtype=np.int64)
        row[cols] = np.arange(k)
        small = np.int8 if self.n <= 127 else np.int64  # one byte a cell where the ranks fit
        ranks = np.ascontiguousarray(moments[:, :k].T.astype(np.int64) - 1, dtype=small)  # dense ranks from 0
        groups = ranks.max(axis=1).astype(np.int64) + 1 if k else np.zeros(0, dtype=np.int64)
        largest = np.zeros(k, dtype=np.int64)
        for g in range(int(groups.max()) if k else 0):
            largest = np.maximum(largest, (ranks == g).sum(axis=1))
        return row, ranks, groups, largest

    def buffers(self, b, counts):
        size = CHUNK * b
        cand = (np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64), np.empty(size),
                np.empty(size, dtype=np.int64))
        return {**super().buffers(b, counts), "candidates": cand}

    def start(self, wt, buffers):
        chosen = (wt > 0).astype(np.float64)
        return chosen, chosen.sum(axis=0), buffers["candidates"]

    def chunk(self, state, wt, j1, j0, counts, has_counts, total, used):
        chosen, count, cand = state
        n, b = wt.shape
        fewest = max(2, int(count.min()))  # one chosen system is undefined anyway
        k = self.loops.pearson_inputs(wt, (chosen, count, fewest), (self.xc, self.zc), (j0, j1),
                                      (self.tx, self.rx, self.gx, self.bx), (self.tz, self.rz, self.gz, self.bz),
                                      (counts, has_counts, self.skip),
                                      (np.empty((5, b)), np.empty((n, b)), np.empty(b, dtype=np.int64), np.empty(b)),
                                      (total, used), tuple(cand))
        if k:
            self._decide(chosen, *(c[:k] for c in cand), counts, has_counts, total, used)

    def _decide(self, chosen, cols, rows, r, flags, counts, has_counts, total, used):
        """Resamples whose chosen systems lie in one group of near-equal values: undefined where those values
        are constant (:func:`metaeval.stats.correlations.ties.is_constant`), else ``r``; added to the aggregate."""
        from metaeval.stats.correlations.ties import is_constant

        chosen = chosen[:, rows].T > 0  # (K, N)
        bad = np.zeros(cols.size, dtype=bool)
        for bit, values in ((1, self.x), (2, self.z)):
            which = np.flatnonzero(flags & bit)
            if which.size:
                picked = np.where(chosen[which], values[:, cols[which]].T, np.nan)
                bad[which] |= is_constant(picked, axis=1)
        r = np.where(bad, np.nan, r)
        c = counts[cols, rows].astype(np.float64) if has_counts else np.ones(cols.size)
        ok = ~np.isnan(r)
        np.add.at(total[0], rows[ok], c[ok] * r[ok])
        np.add.at(used, rows, c * ok if self.skip else c)


def summary_inputs_kernel(x, z, coefficient, undefined, rtol=TIE_RTOL):
    """The chunked summary-level kernel of ``coefficient`` for BOOT-SYSTEMS / BOOT-BOTH, or None (few inputs,
    another coefficient, or numba not installed); ``rtol``: the relative tie tolerance."""
    if x.shape[1] < MIN_INPUTS or not compiler.numba_available():
        return None
    kind = INPUT_KERNELS.get(coefficient)
    return None if kind is None else kind(x, z, undefined, rtol)


INPUT_KERNELS = {"spearman": SpearmanInputs, "kendall-b": KendallInputs, "pearson": PearsonInputs}
"""The chunked kernel of each coefficient (the ``boot-many-inputs`` route of
:data:`metaeval.stats.kernels.bootstrap.BOOTSTRAP_ROUTES`)."""
