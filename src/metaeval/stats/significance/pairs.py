"""All-pairs significance matrix of P metrics against one human score, with shared draws.

For metrics ``X_1..X_P`` (array ``(P, N, M)``) and human scores ``Z`` the matrix entry ``[i, j]`` tests
``H1: rho(X_i, Z) > rho(X_j, Z)`` (``alternative="greater"``; "less" tests ``<``, "two-sided" ``!=``),
so a significance matrix reads *row beats column*. ``deltas[i, j] = L(X_i, Z) - L(X_j, Z)``.

Tests:

``"permutation"``
    :mod:`metaeval.stats.significance.permutation` (PERM-SYSTEMS / INPUTS / BOTH). One set of swap masks is drawn
    for the whole matrix and shared by every pair. Entry ``[j, i]`` uses the same permutations as
    ``[i, j]``: swapping under ``m`` for ``(j, i)`` gives ``-delta_s`` of ``(i, j)``, so both directions come
    from one evaluation per unordered pair.
``"bootstrap"``
    :mod:`metaeval.stats.significance.paired_bootstrap`. One set of bootstrap indices is drawn; every metric's
    bootstrap distribution is computed once and ``delta_s = r*_i - r*_j``.
``"williams"``
    Williams' test (:mod:`metaeval.stats.significance.williams`) on signed Pearson correlations; system or global
    level only (``n`` = number of systems, or of cells, on the pair's common cells).

Missing cells: pair ``(i, j)`` is tested on the cells where ``X_i``, ``X_j`` and ``Z`` are all present
(:mod:`metaeval.stats.significance.common`), as the single two-metric tests are; ``deltas[i, j]`` is then the
difference on those cells. When every metric is present wherever the human is, these are the same cells
for all pairs and the work is shared; otherwise each pair is computed on its own cells (slower).

Work shared between pairs: the draws, the per-batch conversions of the masks, the standardized metrics,
the per-metric masked system sums (system level) and the per-metric bootstrap distributions. Corrections
(optional, ``correction=``) apply to the off-diagonal matrix (``significance.corrections.adjust_pvalues``).

References
----------
Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
using Resampling Methods. TACL 9, 1132-1146.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError, check_choice, check_int
from metaeval.stats import kernels as _kernels
from metaeval.stats.correlations import levels as _levels
from metaeval.stats.resampling.bootstrap import (
    ENGINES,
    _cells_per_resample,
    _common_iv,
    bootstrap_samples,
    power_of_two_rescaled,
)
from metaeval.stats.significance.common import common_cells
from metaeval.stats.significance.paired_bootstrap import bootstrap_pvalue
from metaeval.stats.significance.permutation import _reference_batch, count_extreme, standardize
from metaeval.stats.resampling.draws import (
    as_generator,
    batch_slices,
    bootstrap_draws,
    check_batch,
    permutation_draws,
)
from metaeval.vocabulary import (
    METRIC_TESTS,
    check_alternative,
    check_method,
    check_metric_test,
)

__all__ = ["TESTS", "PairwiseOutcome", "pairwise_tests"]

TESTS = METRIC_TESTS


@dataclass(frozen=True)
class PairwiseOutcome:
    """Result of :func:`pairwise_tests`.

    Attributes
    ----------
    statistics : ndarray (P,)
        ``L(X_i, Z)`` for every metric (Pearson for Williams' test).
    deltas : ndarray (P, P)
        ``statistics[i] - statistics[j]`` (0 on the diagonal).
    pvalues : ndarray (P, P)
        p-value of ``H1: rho_i > rho_j`` (for "greater"); NaN on the diagonal.
    adjusted_pvalues : ndarray (P, P) or None
        After ``correction`` over the off-diagonal entries (None without correction).
    n_resamples_dropped : ndarray of int (P, P)
        Undefined resamples per pair (0 for Williams).
    test, method, alternative : str
    n_resamples : int or None
    """

    statistics: np.ndarray
    deltas: np.ndarray
    pvalues: np.ndarray
    adjusted_pvalues: np.ndarray | None
    n_resamples_dropped: np.ndarray
    test: str
    method: str | None
    alternative: str
    n_resamples: int | None


def _pairs_iv(scores, z, test, level, coefficient, method, alternative, n_resamples, undefined, tie_threshold,
              engine):
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 3 or scores.shape[0] < 2:
        raise ParameterError(f"`scores` must be an array of shape (P >= 2, N, M); got shape {scores.shape!r}.")
    _, z, level, coefficient, undefined, _, tie_threshold = _common_iv(
        scores[0], z, level, coefficient, undefined, False, tie_threshold)
    (scores,), tie_threshold = power_of_two_rescaled((scores,), tie_threshold)
    (z,), _ = power_of_two_rescaled((z,), 0.0)  # exact powers of two: no overflow at 1e160 (issue 22)
    test = check_metric_test(test)
    method = check_method(method)
    alternative = check_alternative(alternative)
    k = check_int("n_resamples", n_resamples, minimum=1)
    engine = check_choice("engine", engine, ENGINES)
    if test == "williams" and level not in ("system", "global", "partial"):
        raise ParameterError(f"`level` must be 'system', 'global' or 'partial' for Williams' test; got {level!r}.")
    return scores, z, test, level, coefficient, method, alternative, k, undefined, tie_threshold, engine


def pairwise_tests(
    scores,
    z,
    *,
    test: str = defaults.METRIC_TEST,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
    undefined: str = defaults.UNDEFINED,
    tie_threshold: float = 0.0,
    correction: str | None = None,
    progress: Any = None,
    engine: str = "auto",
) -> PairwiseOutcome:
    """Significance of every ordered pair of metrics, ``H1: rho(X_i, Z) > rho(X_j, Z)``.

    Parameters
    ----------
    scores : array_like, shape (P, N, M)
        P metrics' scores (systems x inputs); for corpus metrics see
        :func:`metaeval.stats.significance.corpus_tests.corpus_pairwise_tests`.
    z : array_like, shape (N, M)
        Human scores.
    test : {"permutation", "bootstrap", "williams"}
    level, coefficient : str
        Williams' test always uses Pearson at the system or global level.
    method : {"systems", "inputs", "both"}
        Resampling scheme of the permutation / bootstrap test.
    alternative : {"greater", "less", "two-sided"}
    n_resamples : int
    rng : None, int or numpy.random.Generator
        One set of draws for the whole matrix.
    batch : int, optional
        Resamples per batch; results identical for any value.
    undefined : {"skip", "zero"}
    tie_threshold : float
    correction : {"holm", "holm-sidak", "bonferroni", "sidak", "benjamini-hochberg", "none"}, optional
        Adjust the off-diagonal p-values as one family.
    engine : {"auto", "reference"}

    progress : callable, optional
        Called with no argument once per resample evaluated, ``n_resamples`` times in all (for progress
        bars; pairs and metrics evaluated one after another share the count); never for Williams.

    Returns
    -------
    PairwiseOutcome
    """
    scores, z, test, level, coefficient, method, alternative, k, undefined, tie_threshold, engine = _pairs_iv(
        scores, z, test, level, coefficient, method, alternative, n_resamples, undefined, tie_threshold, engine)
    gen = as_generator(rng)
    check_batch(batch, 1)
    p = scores.shape[0]
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold)
    dropped = np.zeros((p, p), dtype=np.int64)
    pvalues = np.full((p, p), np.nan)
    # The cells of pair (i, j) are those where X_i, X_j and Z are all present. When every metric is present
    # wherever the human and the other metrics are, these are the same cells for every pair: mask once and
    # share the work between pairs; otherwise each pair is tested on its own common cells.
    valid = np.isfinite(scores) & np.isfinite(z)
    shared = bool((valid == valid[0]).all())
    if shared:
        scores, z = np.where(valid[0], scores, np.nan), np.where(valid[0], z, np.nan)
    pair_deltas = None if shared else np.zeros((p, p))

    if test == "williams":
        statistics = _williams_matrix(scores, z, level, alternative, pvalues, pair_deltas)
        n_res = None
        method_out = None
    elif test == "permutation":
        std = np.stack([standardize(scores[i], f"scores[{i}]") for i in range(p)])
        statistics = np.array([float(r.statistic) for r in _kernels.point_correlations(list(std), z, **kw)])
        draws = permutation_draws(scores.shape[1], scores.shape[2], method=method, n_resamples=k, rng=gen)
        if shared:
            deltas_s = _permutation_pairs(std, z, draws, batch, engine, kw, progress)
            observed = {pair: statistics[pair[0]] - statistics[pair[1]] for pair in deltas_s}
        else:
            deltas_s, observed = _permutation_own_cells(scores, z, draws, batch, engine, kw, pair_deltas, progress)
        for (i, j), ds in deltas_s.items():
            null = ds[np.isfinite(ds)]
            delta = observed[i, j]
            dropped[i, j] = dropped[j, i] = k - null.size
            if not np.isfinite(delta) or null.size == 0:
                continue
            greater = (1 + count_extreme(null, delta, "greater")) / (1 + null.size)
            less = (1 + count_extreme(null, delta, "less")) / (1 + null.size)
            if alternative == "greater":
                pvalues[i, j], pvalues[j, i] = greater, less
            elif alternative == "less":
                pvalues[i, j], pvalues[j, i] = less, greater
            else:
                pvalues[i, j] = pvalues[j, i] = (1 + count_extreme(null, delta, "two-sided")) / (1 + null.size)
        n_res, method_out = k, method
    else:
        statistics = np.array([float(r.statistic) for r in _kernels.point_correlations(list(scores), z, **kw)])
        draws = bootstrap_draws(scores.shape[1], scores.shape[2], method=method, n_resamples=k, rng=gen)
        steps = _Steps(progress, k, p if shared else p * (p - 1) // 2)
        if shared:
            samples = []
            for i in range(p):
                samples.append(bootstrap_samples(scores[i], z, draws=draws, batch=batch, engine=engine, **kw))
                steps.done()
        for i in range(p):
            for j in range(i + 1, p):
                if shared:
                    ds, delta = samples[i] - samples[j], statistics[i] - statistics[j]
                else:
                    cells = common_cells(scores[i], scores[j], z)
                    rx, ry = (float(r.statistic) for r in
                              _kernels.point_correlations([cells.x, cells.y], cells.z, **kw))
                    delta = pair_deltas[i, j] = rx - ry
                    pair_deltas[j, i] = -delta
                    ds = (bootstrap_samples(cells.x, cells.z, draws=draws, batch=batch, engine=engine, **kw)
                          - bootstrap_samples(cells.y, cells.z, draws=draws, batch=batch, engine=engine, **kw))
                    steps.done()
                record_bootstrap_pair(pvalues, dropped, i, j, ds, delta, alternative)
        n_res, method_out = k, method

    deltas = statistics[:, None] - statistics[None, :] if pair_deltas is None else pair_deltas
    np.fill_diagonal(deltas, 0.0)
    np.fill_diagonal(pvalues, np.nan)
    return PairwiseOutcome(statistics, deltas, pvalues, adjusted_matrix(pvalues, correction), dropped, test,
                           method_out, alternative, n_res)


def record_bootstrap_pair(pvalues, dropped, i: int, j: int, ds: np.ndarray, delta: float, alternative: str) -> None:
    """Fill ``[i, j]`` and ``[j, i]`` of the paired-bootstrap p-values and dropped counts from ``delta_s`` of
    pair ``(i, j)`` (undefined resamples dropped) and its observed ``delta``."""
    defined = ds[np.isfinite(ds)]
    dropped[i, j] = dropped[j, i] = ds.size - defined.size
    pvalues[i, j] = bootstrap_pvalue(defined, delta, alternative)
    pvalues[j, i] = bootstrap_pvalue(-defined, -delta, alternative)


def adjusted_matrix(pvalues: np.ndarray, correction: str | None) -> np.ndarray | None:
    """The off-diagonal p-values adjusted as one family (NaN diagonal), or None without a correction."""
    if correction is None:
        return None
    from metaeval.stats.significance.corrections import adjust_pvalues

    adjusted = np.full(pvalues.shape, np.nan)
    off = ~np.eye(pvalues.shape[0], dtype=bool)
    adjusted[off] = adjust_pvalues(pvalues[off], method=correction)
    return adjusted


class _Steps:
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


def _permutation_pairs(std, z, draws, batch, engine, kw, progress=None):
    """``delta_s`` of every unordered pair ``i < j`` under the shared masks: dict ``(i, j) -> (k,)``.

    The pairs a fast kernel computes run in batches sized for the kernels; the pairs left to the reference
    path (materialised resamples) run afterwards in their own, smaller batches, so that a few such pairs
    never shrink the batches of the others (the results do not depend on the batch).
    """
    p, n, m = std.shape
    k = draws.n_resamples
    pairs = [(i, j) for i in range(p) for j in range(i + 1, p)]
    out = {pair: np.empty(k) for pair in pairs}
    complete = bool(np.isfinite(std).all() and np.isfinite(z).all())
    shared_system = None
    if engine == "auto" and complete and kw["level"] == "system":
        shared_system = _SharedSystemMeans(std, z, draws)
    shared = []  # kernels shared by several pairs, each with ``covers``, in order of preference
    if (engine == "auto" and complete and kw["level"] == "summary" and kw["coefficient"] == "pearson"
            and draws.method != "inputs"):
        shared.append(_kernels.PearsonSummaryShared(std, z, kw["undefined"]))
    if engine == "auto" and complete and draws.method == "both":
        shared_pair = _shared_pair_kernel(std, z, pairs, kw)
        if shared_pair is not None:
            shared = [shared_pair]
        left = [pair for pair in pairs if not any(_covers(kern, pair) for kern in shared)]
        tied_pair = _tied_pair_kernel(std, z, left, kw) if left else None
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
    steps = _Steps(progress, k, 1)  # k units: the fast pairs' batches, or the reference pairs' when there are any
    with _kernels.single_blas_thread():
        if fast:
            size = check_batch(batch, max(kern.cells for kern in fast), budget=_kernels.KERNEL_BATCH_CELLS)
            for sl in batch_slices(k, size):
                _permutation_batch(out, pairs, std, z, draws, sl, shared_system, shared, kernels, kw)
                if not reference:
                    steps.done(sl.stop - sl.start)
        if reference:
            size = check_batch(batch, _cells_per_resample(std[0], kw["coefficient"]))
            for sl in batch_slices(k, size):
                for i, j in reference:
                    rx, ry = _reference_batch(std[i], std[j], z, draws, sl, kw["level"], kw["coefficient"],
                                              kw["undefined"], kw["tie_threshold"])
                    out[i, j][sl] = rx - ry
                steps.done(sl.stop - sl.start)
    return out


TIED_SHARE = 0.25
"""Summary-level Kendall tau-b: a pair whose metrics tie within more than this share of the inputs takes its
own kernel (:func:`metaeval.stats.kernels.permutation_kernel`, quadratic forms in the mask of every input),
which costs less there than counting each tied input per resample (measured on the tie-heavy workload of
``benchmarks/bench_kendall_ties.py``: about 0.13 us per input and resample against 0.3 us per tied input)."""


def _tied_pair_kernel(std, z, pairs, kw):
    """A compiled kernel for the summary-level pairs ``pairs`` whose metrics tie within some inputs (PERM-BOTH,
    complete data, a pair-count coefficient or Spearman), or None: each pair's inputs without a tie come
    from exact integer products, its tied inputs are counted per resample
    (:class:`metaeval.stats.kernels.dominance.GroupPairsCompiled` with ``tied``), so a pair with one near tie
    costs about what a tie-free pair does."""
    from metaeval.stats.kernels import shared
    from metaeval.stats.kernels.global_pairs import numba_available

    if (kw["level"] != "summary" or kw["coefficient"] not in shared.COEFFICIENTS or kw["tie_threshold"] != 0
            or std.shape[1] < 3 or not numba_available()):
        return None
    wanted = set(pairs)
    most = std.shape[2] * TIED_SHARE if kw["coefficient"] == "kendall-b" else std.shape[2]
    tied = {pair: groups for pair, groups in shared.tied_groups(std, "summary").items()
            if pair in wanted and len(groups) <= most}
    pairs = [pair for pair in pairs if pair in tied]
    if not pairs:
        return None
    if shared.SummaryPairsShared.applicable(*std.shape[1:]):
        kernel = shared.SummaryPairsShared(std, z, kw["coefficient"], kw["undefined"], tied)
    else:
        from metaeval.stats.kernels.dominance import GroupPairsCompiled

        kernel = GroupPairsCompiled(std, z, kw["coefficient"], kw["undefined"], "summary", tied)
    kernel.prepare(pairs)
    return kernel if kernel.products.exact else None


def _shared_pair_kernel(std, z, pairs, kw):
    """A kernel shared by the pairs (PERM-BOTH, complete data), or None for the per-pair kernels; a kernel
    with ``covers(i, j)`` handles only the pairs for which it is True.

    Global Pearson; summary-level Pearson (compiled); by-system Pearson (numpy, per-row
    masked sums, pairs without a tie within a row); the pair-count coefficients and
    Spearman without metric ties within a group (:data:`metaeval.stats.kernels.shared.COEFFICIENTS`): dense
    numpy terms at summary level for ``N <= 32``, compiled dominance counts otherwise and at the by-system and
    global levels (numba; without it None, the reference path).
    """
    from metaeval.stats.kernels import shared
    from metaeval.stats.kernels.global_pairs import numba_available

    level, coefficient = kw["level"], kw["coefficient"]
    if level == "global" and coefficient == "pearson":
        return shared.GlobalPearsonShared(std, z)
    if level == "summary" and coefficient == "pearson":
        if numba_available():  # any metric ties (their risky inputs per pair, see the kernel)
            from metaeval.stats.kernels.summary_pearson import PearsonSummaryCompiled

            return PearsonSummaryCompiled(std, z, kw["undefined"], pairs)
        return None
    if level == "by-system" and coefficient == "pearson":
        from metaeval.stats.kernels.by_system_pearson import BySystemPearsonShared

        ok = shared.tie_free_pairs(std, level)
        return BySystemPearsonShared(std, z, kw["undefined"], ok) if any(ok[pair] for pair in pairs) else None
    if coefficient not in shared.COEFFICIENTS or kw["tie_threshold"] != 0:
        return None
    if level not in ("summary", "by-system", "global"):
        return None
    ok = shared.tie_free_pairs(std, level)
    if level == "summary" and shared.SummaryPairsShared.applicable(*std.shape[1:]):
        pairs = [pair for pair in pairs if ok[pair]]  # the others: per-pair kernels or the reference path
        if not pairs:
            return None
        kernel = shared.SummaryPairsShared(std, z, coefficient, kw["undefined"])
    elif numba_available():
        from metaeval.stats.kernels.dominance import GroupPairsCompiled

        # by-system and global: a pair's groups with a metric tie are counted per resample (compiled)
        size = {"by-system": std.shape[2], "global": std.shape[1] * std.shape[2]}.get(level, 0)
        tied = shared.tied_groups(std, level) if size > 2 else {}
        pairs = [pair for pair in pairs if ok[pair] or pair in tied]
        if not pairs:
            return None
        kernel = GroupPairsCompiled(std, z, coefficient, kw["undefined"], level, tied)
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
            rx = _kernels.system_correlation(xp, *args)
            ry = _kernels.system_correlation(yp, *args)
            out[i, j][sl] = rx - ry
        elif kernel is not None and hasattr(kernel, "deltas"):
            out[i, j][sl] = kernel.deltas(cache, i, j)
        elif kernel is not None:
            rx, ry = kernel.evaluate(cache, i, j)
            out[i, j][sl] = rx - ry
        elif kernels.get((i, j)) is not None:
            out[i, j][sl] = kernels[i, j].deltas(cache)


class _SharedSystemMeans:
    """Permuted system means of every metric pair from per-metric masked sums (complete data).

    ``shift_p = (1/M) sum_b m_ab X_p[a, b]`` is computed once per metric and batch (byte tables for
    PERM-BOTH, exact weighted sums for PERM-INPUTS); then ``X'_a = xbar_i + shift_j - shift_i`` and
    ``Y' = xbar_i + xbar_j - X'``.
    """

    def __init__(self, std, z, draws):
        self.p, self.n, self.m = std.shape
        self.cells = (self.p + 24) * self.n + self.n * (self.n - 1) // 4
        self.means = std.mean(axis=2)  # (P, N)
        self.zbar = z.mean(axis=1)
        self.z_signs = _kernels.fixed_pair_signs(self.zbar) if self.n <= _kernels.PAIRWISE_SYSTEMS_MAX else None
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


def _permutation_own_cells(scores, z, draws, batch, engine, kw, pair_deltas, progress=None):
    """Permuted and observed deltas of every pair ``i < j`` on the pair's own common cells."""
    from metaeval.stats.significance.permutation import permutation_deltas

    p = scores.shape[0]
    out, observed = {}, {}
    steps = _Steps(progress, draws.n_resamples, p * (p - 1) // 2)
    for i in range(p):
        for j in range(i + 1, p):
            cells = common_cells(scores[i], scores[j], z)
            xs, ys = standardize(cells.x, f"scores[{i}]"), standardize(cells.y, f"scores[{j}]")
            rx, ry = (float(r.statistic) for r in _kernels.point_correlations([xs, ys], cells.z, **kw))
            observed[i, j] = pair_deltas[i, j] = rx - ry
            pair_deltas[j, i] = -(rx - ry)
            out[i, j] = permutation_deltas(xs, ys, cells.z, draws=draws, batch=batch, engine=engine, **kw)
            steps.done()
    return out, observed


def _williams_matrix(scores, z, level, alternative, pvalues, pair_deltas):
    """Each metric's Pearson correlation; fills ``pvalues`` (and ``pair_deltas`` unless None) in place.

    Pair (i, j) uses r(X_i, Z), r(X_j, Z), r(X_i, X_j) and n on the cells where X_i, X_j and Z are all
    present (n = systems at system level, cells at global level), so that (i, j) and (j, i) mirror each other.
    """
    from metaeval.stats.significance.williams import williams_test

    p = scores.shape[0]
    pearson = dict(level=level, coefficient="pearson")
    r = np.array([float(_levels.level_correlation(scores[i], z, **pearson).statistic) for i in range(p)])
    for i in range(p):
        for j in range(i + 1, p):
            cells = common_cells(scores[i], scores[j], z)
            ri = _levels.level_correlation(cells.x, cells.z, **pearson)
            rj = float(_levels.level_correlation(cells.y, cells.z, **pearson).statistic)
            rij = float(_levels.level_correlation(cells.x, cells.y, **pearson).statistic)
            if pair_deltas is not None:
                pair_deltas[i, j], pair_deltas[j, i] = float(ri.statistic) - rj, rj - float(ri.statistic)
            n = int(ri.n_used)
            if n < 4:
                continue
            pvalues[i, j] = float(williams_test(float(ri.statistic), rj, rij, n, alternative=alternative).pvalue)
            pvalues[j, i] = float(williams_test(rj, float(ri.statistic), rij, n, alternative=alternative).pvalue)
    return r
