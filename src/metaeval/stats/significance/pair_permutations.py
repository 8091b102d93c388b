"""Permuted deltas of every metric pair under one set of swap masks: which kernel computes each pair.

:func:`permutation_pairs` gives ``delta_s = r(X'_i) - r(Y'_j)`` of every unordered pair for
:func:`metaeval.stats.significance.pairs.pairwise_tests`. Each pair takes the first kernel that computes it:

1. the system level: the permuted system means of every metric pair from per-metric masked sums
   (:class:`SharedSystemMeans`);
2. a kernel shared by the pairs (:func:`shared_pair_kernel`: global / summary / by-system Pearson, the
   pair-count coefficients and Spearman from exact integer products);
3. at the summary level, the pairs whose metrics tie within some inputs: the same products for their other
   inputs, the tied inputs counted per resample (:func:`tied_pair_kernel`; Kendall tau-b from block tables of
   the packed counts, :class:`metaeval.stats.kernels.kendall_blocks.KendallBlockPairs`);
4. a kernel of its own (:func:`metaeval.stats.kernels.permutation_kernel`);
5. the reference path (materialised resamples, :func:`metaeval.stats.significance.permutation.reference_deltas`),
   in batches of its own, so that a few such pairs never shrink the batches of the others.

Every kernel equals the reference path to rounding (1e-12 in the tests) and does not depend on the batch.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats import kernels as _kernels
from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.resampling.bootstrap import cells_per_resample
from metaeval.stats.resampling.draws import batch_slices, check_batch
from metaeval.stats.significance.permutation import reference_deltas

__all__ = ["TIED_SHARE", "ProgressSteps", "SharedSystemMeans", "permutation_pairs", "shared_pair_kernel",
           "tied_pair_kernel"]


class ProgressSteps:
    """Reports ``total`` units of progress spread over ``parts`` steps done one after another."""

    def __init__(self, progress, total: int, parts: int):
        self.progress, self.total, self.parts, self.count = progress, total, max(1, parts), 0

    def done(self, units: int | None = None) -> None:
        """One step done (``units``: report exactly this many instead of an even share)."""
        if self.progress is None:
            return
        if units is None:
            before = self.total * self.count // self.parts
            self.count += 1
            units = self.total * self.count // self.parts - before
        for _ in range(units):
            self.progress()


def permutation_pairs(std, z, draws, batch, engine, kw, progress=None, rtol: float = TIE_RTOL):
    """``delta_s`` of every unordered pair ``i < j`` under the shared masks: dict ``(i, j) -> (k,)``.

    The pairs a fast kernel computes run in batches sized for the kernels; the pairs left to the reference
    path (materialised resamples) run afterwards in their own, smaller batches, so that a few such pairs
    never shrink the batches of the others (the results do not depend on the batch). ``rtol``: the relative tie
    tolerance, passed to every kernel built here (a different ``kw["rtol"]`` is refused, never overridden).
    """
    if kw.get("rtol", rtol) != rtol:
        raise ValueError(f"permutation_pairs: kw['rtol'] = {kw['rtol']!r} differs from rtol = {rtol!r}.")
    kw = {**kw, "rtol": rtol}
    p, n, m = std.shape
    k = draws.n_resamples
    pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
    out = {pair: np.empty(k) for pair in pairs}
    complete = bool(np.isfinite(std).all() and np.isfinite(z).all())
    shared_system = None
    if engine == "auto" and complete and kw["level"] == "system":
        shared_system = SharedSystemMeans(std, z, draws, rtol)
    shared = []  # kernels shared by several pairs, each with ``covers``, in order of preference
    if (engine == "auto" and complete and kw["level"] == "summary" and kw["coefficient"] == "pearson"
            and draws.method != "inputs"):
        shared.append(_kernels.PearsonSummaryShared(std, z, kw["undefined"]))
    if engine == "auto" and complete and draws.method == "both":
        from metaeval.stats.kernels.kendall.summary_pairs import TieChains

        chains = TieChains(std, rtol)  # both kernels ask which pairs tie where
        shared_pair = shared_pair_kernel(std, z, pairs, kw, rtol, chains)
        if shared_pair is not None:
            shared = [shared_pair]
        left = [pair for pair in pairs if not any(_covers(kern, pair) for kern in shared)]
        tied_pair = tied_pair_kernel(std, z, left, kw, rtol, chains) if left else None
        if tied_pair is not None:
            shared.append(tied_pair)
    kernels = {}
    uncovered = ([] if shared_system is not None else
                 [pair for pair in pairs if not any(_covers(kern, pair) for kern in shared)])
    if engine == "auto":
        for i, j in uncovered:
            kernels[i, j] = _kernels.permutation_kernel(std[i], std[j], z, draws=draws, **kw)
    reference = [pair for pair in uncovered if kernels.get(pair) is None]
    fast = [kern for kern in (shared_system, *shared, *kernels.values()) if kern is not None]
    steps = ProgressSteps(progress, k, 1)  # k units: the fast pairs' batches, or the reference pairs' if any
    with _kernels.single_blas_thread():
        if fast:
            size = check_batch(batch, max(kern.cells for kern in fast), budget=_kernels.KERNEL_BATCH_CELLS)
            for sl in batch_slices(k, size):
                _permutation_batch(out, pairs, std, z, draws, sl, shared_system, shared, kernels, kw)
                if not reference:
                    steps.done(sl.stop - sl.start)
        if reference:
            size = check_batch(batch, cells_per_resample(std[0], kw["coefficient"]))
            for sl in batch_slices(k, size):
                for i, j in reference:
                    rx, ry = reference_deltas(std[i], std[j], z, draws, sl, kw["level"], kw["coefficient"],
                                              kw["undefined"], kw["tie_threshold"], rtol)
                    out[i, j][sl] = rx - ry
                steps.done(sl.stop - sl.start)
    return out


TIED_SHARE = 0.25
"""Summary-level Kendall tau-b with more systems than the block tables take
(:data:`metaeval.stats.kernels.kendall_blocks.MAX_SYSTEMS`): a pair whose metrics tie within more than this share of the inputs takes its
own kernel (:func:`metaeval.stats.kernels.permutation_kernel`, quadratic forms in the mask of every input),
which costs less there than counting each tied input per resample (measured on the tie-heavy workload of
``benchmarks/bench_kendall_ties.py``: about 0.13 us per input and resample against 0.3 us per tied input)."""


def tied_pair_kernel(std, z, pairs, kw, rtol: float = TIE_RTOL, chains=None):
    """A compiled kernel for the summary-level pairs ``pairs`` whose metrics tie within some inputs (PERM-BOTH,
    complete data, a pair-count coefficient or Spearman), or None: each pair's inputs without a tie come
    from exact integer products, its tied inputs are counted per resample
    (:class:`metaeval.stats.kernels.dominance.GroupPairsCompiled` with ``tied``), so a pair with one near tie
    costs about what a tie-free pair does. Kendall tau-b with 3 to 32 systems: every such pair, its tied inputs
    (or all its inputs, when most tie) from block tables
    (:class:`metaeval.stats.kernels.kendall_blocks.KendallBlockPairs`). ``rtol``: the relative tie tolerance;
    ``chains``: the :class:`~metaeval.stats.kernels.shared.TieChains` of ``std``, when already made."""
    from metaeval.stats.kernels.kendall import summary_pairs as shared
    from metaeval.stats.kernels.kendall.global_bootstrap import numba_available

    if (kw["level"] != "summary" or kw["coefficient"] not in shared.COEFFICIENTS or kw["tie_threshold"] != 0
            or std.shape[1] < 3 or not numba_available()):
        return None
    wanted = set(pairs)
    if kw["coefficient"] == "kendall-b":
        from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

        if KendallBlockPairs.applicable(*std.shape[1:]):  # every tied pair, the tied inputs from block tables
            tied = {pair: groups for pair, groups in
                    shared.tied_groups(std, "summary", rtol=rtol, chains=chains).items() if pair in wanted}
            pairs = [pair for pair in pairs if pair in tied]
            if not pairs:
                return None
            kernel = KendallBlockPairs(std, z, kw["undefined"], tied, rtol=rtol)
            kernel.prepare(pairs)
            return kernel
    most = std.shape[2] * TIED_SHARE if kw["coefficient"] == "kendall-b" else std.shape[2]
    tied = {pair: groups for pair, groups in shared.tied_groups(std, "summary", rtol=rtol, chains=chains).items()
            if pair in wanted and len(groups) <= most}
    pairs = [pair for pair in pairs if pair in tied]
    if not pairs:
        return None
    if shared.SummaryPairsShared.applicable(*std.shape[1:]):
        kernel = shared.SummaryPairsShared(std, z, kw["coefficient"], kw["undefined"], tied, rtol=rtol)
    else:
        from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

        kernel = GroupPairsCompiled(std, z, kw["coefficient"], kw["undefined"], "summary", tied, rtol=rtol)
    kernel.prepare(pairs)
    return kernel if kernel.products.exact else None


def shared_pair_kernel(std, z, pairs, kw, rtol: float = TIE_RTOL, chains=None):
    """A kernel shared by the pairs (PERM-BOTH, complete data), or None for the per-pair kernels; a kernel
    with ``covers(i, j)`` handles only the pairs for which it is True.

    Global Pearson; summary-level Pearson (compiled); by-system Pearson (numpy, per-row
    masked sums, pairs without a tie within a row); the pair-count coefficients and
    Spearman without metric ties within a group (:data:`metaeval.stats.kernels.shared.COEFFICIENTS`): dense
    numpy terms at summary level for ``N <= 32``, compiled dominance counts otherwise and at the by-system and
    global levels (numba; without it None, the reference path). ``rtol``: the relative tie tolerance that
    decides which pairs tie; ``chains``: the :class:`~metaeval.stats.kernels.shared.TieChains` of ``std``,
    when already made.
    """
    from metaeval.stats.kernels.kendall import summary_pairs as shared
    from metaeval.stats.kernels.kendall.global_bootstrap import numba_available

    level, coefficient = kw["level"], kw["coefficient"]
    if level == "global" and coefficient == "pearson":
        return shared.GlobalPearsonShared(std, z)
    if level == "summary" and coefficient == "pearson":
        if numba_available():  # any metric ties (their risky inputs per pair, see the kernel)
            from metaeval.stats.kernels.pearson.summary_pairs import PearsonSummaryCompiled

            return PearsonSummaryCompiled(std, z, kw["undefined"], pairs, rtol=rtol)
        return None
    if level == "by-system" and coefficient == "pearson":
        from metaeval.stats.kernels.pearson.by_system_pairs import BySystemPearsonShared

        ok = shared.tie_free_pairs(std, level, rtol=rtol, chains=chains)
        return BySystemPearsonShared(std, z, kw["undefined"], ok) if any(ok[pair] for pair in pairs) else None
    if coefficient not in shared.COEFFICIENTS or kw["tie_threshold"] != 0:
        return None
    if level not in ("summary", "by-system", "global"):
        return None
    ok = shared.tie_free_pairs(std, level, rtol=rtol, chains=chains)
    if level == "summary" and shared.SummaryPairsShared.applicable(*std.shape[1:]):
        pairs = [pair for pair in pairs if ok[pair]]  # the others: per-pair kernels or the reference path
        if not pairs:
            return None
        kernel = shared.SummaryPairsShared(std, z, coefficient, kw["undefined"], rtol=rtol)
    elif numba_available():
        from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

        # by-system and global: a pair's groups with a metric tie are counted per resample (compiled)
        size = {"by-system": std.shape[2], "global": std.shape[1] * std.shape[2]}.get(level, 0)
        tied = shared.tied_groups(std, level, rtol=rtol, chains=chains) if size > 2 else {}
        pairs = [pair for pair in pairs if ok[pair] or pair in tied]
        if not pairs:
            return None
        kernel = GroupPairsCompiled(std, z, coefficient, kw["undefined"], level, tied, rtol=rtol)
    else:
        return None
    kernel.prepare(pairs)
    return kernel if kernel.products.exact else None


def _covers(kernel, pair) -> bool:
    """Whether a shared kernel computes ``pair`` (kernels without ``covers`` compute every pair)."""
    if kernel is None:
        return False
    return kernel.covers(*pair) if hasattr(kernel, "covers") else True


def _permutation_batch(out, pairs, std, z, draws, sl, shared_system, shared, kernels, kw):
    """Fill ``out[i, j][sl]`` for every pair a fast kernel computes from one batch of the shared masks."""
    cache = _kernels.BatchCache(draws, sl)
    for i, j in pairs:
        kernel = next((kern for kern in shared if _covers(kern, (i, j))), None)
        if shared_system is not None:
            xp, yp = shared_system.permuted_means(cache, i, j)
            args = (shared_system.zbar, kw["coefficient"], kw["tie_threshold"], shared_system.z_signs,
                    shared_system.z_fixed)
            rx = _kernels.system_correlation(xp, *args, rtol=kw["rtol"])
            ry = _kernels.system_correlation(yp, *args, rtol=kw["rtol"])
            out[i, j][sl] = rx - ry
        elif kernel is not None and hasattr(kernel, "deltas"):
            out[i, j][sl] = kernel.deltas(cache, i, j)
        elif kernel is not None:
            rx, ry = kernel.evaluate(cache, i, j)
            out[i, j][sl] = rx - ry
        elif kernels.get((i, j)) is not None:
            out[i, j][sl] = kernels[i, j].deltas(cache)


class SharedSystemMeans:
    """Permuted system means of every metric pair from per-metric masked sums (complete data).

    ``shift_p = (1/M) sum_b m_ab X_p[a, b]`` is computed once per metric and batch (byte tables for
    PERM-BOTH, exact weighted sums for PERM-INPUTS); then ``X'_a = xbar_i + shift_j - shift_i`` and
    ``Y' = xbar_i + xbar_j - X'``.
    """

    def __init__(self, std, z, draws, rtol=TIE_RTOL):
        self.p, self.n, self.m = std.shape
        self.cells = (self.p + 24) * self.n + self.n * (self.n - 1) // 4
        self.means = std.mean(axis=2)  # (P, N)
        self.zbar = z.mean(axis=1)
        self.z_signs = _kernels.fixed_pair_signs(self.zbar, rtol=rtol) if self.n <= _kernels.PAIRWISE_SYSTEMS_MAX else None
        self.z_fixed = _kernels.fixed_pearson(self.zbar) if self.n >= 2 else None
        self.method = draws.method
        if draws.method == "both":
            self.tables = [_kernels.byte_tables(std[i]) for i in range(self.p)]
        elif draws.method == "inputs":
            self.sums = _kernels.ExactWeightedSums(std.reshape(-1, self.m), self.m)

    def _shifts(self, cache):
        def make():
            if self.method == "both":
                packed = cache.packed()
                return np.stack([_kernels.table_sums(t, packed).T for t in self.tables]) / self.m
            sums = self.sums(cache.draws.bits[cache.sl])  # (b, P * N)
            return sums.reshape(sums.shape[0], self.p, self.n).transpose(1, 0, 2) / self.m

        return cache.get("system-shifts", make)

    def permuted_means(self, cache, i, j):
        if self.method == "systems":
            xp = np.where(cache.draws.bits[cache.sl], self.means[j], self.means[i])
        else:
            shift = self._shifts(cache)
            xp = self.means[i] + (shift[j] - shift[i])
        return xp, self.means[i] + self.means[j] - xp
