"""Permuted deltas of every metric pair under one set of swap masks, pair by pair from the route table.

:func:`permutation_pairs` gives ``delta_s = r(X'_i) - r(Y'_j)`` of every unordered pair for
:func:`metaeval.stats.significance.pairs.pairwise_tests`. Which kernel computes each pair is decided by the route
table :data:`metaeval.stats.kernels.routes.PAIR_ROUTES` (:func:`metaeval.stats.kernels.routes.choose_pair_routes`,
printable, with the reason of every choice: :func:`explain_pairs`); the pairs no route takes run on the reference
path (materialised resamples, :func:`metaeval.stats.significance.permutation.reference_deltas`), in batches of
their own, so that a few such pairs never shrink the batches of the others.

Every kernel equals the reference path to rounding (1e-12 in the tests) and does not depend on the batch.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats import kernels as _kernels
from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.kernels import routes as _routes
from metaeval.stats.kernels.system_means import SharedSystemMeans
from metaeval.stats.resampling.bootstrap import cells_per_resample
from metaeval.stats.resampling.draws import batch_slices, check_batch, permutation_draws
from metaeval.stats.significance.permutation import reference_deltas, standardize

__all__ = ["TIED_SHARE", "ProgressSteps", "SharedSystemMeans", "explain_pairs", "permutation_pairs",
           "shared_pair_kernel", "tied_pair_kernel"]

TIED_SHARE = _routes.TIED_SHARE


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

    The pairs a fast route computes (:func:`metaeval.stats.kernels.routes.choose_pair_routes`) run in batches
    sized for their kernels; the pairs left to the reference path (materialised resamples) run afterwards in their
    own, smaller batches, so that a few such pairs never shrink the batches of the others (the results do not
    depend on the batch). ``rtol``: the relative tie tolerance, passed to every kernel built here (a different
    ``kw["rtol"]`` is refused, never overridden).
    """
    if kw.get("rtol", rtol) != rtol:
        raise ValueError(f"permutation_pairs: kw['rtol'] = {kw['rtol']!r} differs from rtol = {rtol!r}.")
    kw = {**kw, "rtol": rtol}
    k = draws.n_resamples
    routing = _routes.choose_pair_routes(std, z, draws, kw, engine, rtol)
    pairs = list(routing.routes)
    out = {pair: np.empty(k) for pair in pairs}
    kernels = {pair: routing.kernel_for(pair) for pair in pairs}
    reference = [pair for pair in pairs if kernels[pair] is None]
    fast = [kernel for _, kernel in routing.built]
    steps = ProgressSteps(progress, k, 1)  # k units: the fast pairs' batches, or the reference pairs' if any
    with _kernels.single_blas_thread():
        if fast:
            size = check_batch(batch, max(kern.cells for kern in fast), budget=_kernels.KERNEL_BATCH_CELLS)
            for sl in batch_slices(k, size):
                _permutation_batch(out, pairs, std, z, draws, sl, kernels)
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


def _permutation_batch(out, pairs, std, z, draws, sl, kernels):
    """Fill ``out[i, j][sl]`` for every pair a fast kernel computes from one batch of the shared masks."""
    cache = _kernels.BatchCache(draws, sl)
    for pair in pairs:
        kernel = kernels[pair]
        if kernel is not None:
            out[pair][sl] = kernel.deltas(cache, *pair)


_SHARED_ROUTES = ("global-pearson", "summary-pearson-compiled", "by-system-pearson", "summary-pair-counts",
                  "group-pair-counts")
_TIED_ROUTES = ("kendall-blocks", "summary-pair-counts-tied", "group-pair-counts-tied")


def _stage_kernel(names, std, z, pairs, kw, rtol, chains):
    """The kernel of the first route named in ``names`` that builds one for ``pairs`` under PERM-BOTH (complete
    data), or None."""
    kw = {"tie_threshold": 0.0, **kw}
    case = _routes.case_of(z, "both", kw)
    setup = _routes.PairSetup(std, z, None, kw, rtol, chains)
    for route in _routes.PAIR_ROUTES:
        if route.name in names and route.regime.unmet(case) is None:
            kernel = route.build(setup, list(pairs))
            if kernel is not None:
                return kernel
    return None


def shared_pair_kernel(std, z, pairs, kw, rtol: float = TIE_RTOL, chains=None):
    """The kernel of the first all-pairs route shared by the pairs (PERM-BOTH, complete data): global / item-grouped
    / by-system Pearson, the tie-free pair counts (:data:`metaeval.stats.kernels.routes.PAIR_ROUTES`), or None.
    ``chains``: the :class:`~metaeval.stats.kernels.kendall.summary_pairs.TieChains` of ``std``, when already made."""
    return _stage_kernel(_SHARED_ROUTES, std, z, pairs, kw, rtol, chains)


def tied_pair_kernel(std, z, pairs, kw, rtol: float = TIE_RTOL, chains=None):
    """The kernel of the first all-pairs route for the item-grouped pairs whose metrics tie within some inputs
    (block tables for Kendall tau-b, else tied inputs counted per resample), or None."""
    return _stage_kernel(_TIED_ROUTES, std, z, pairs, kw, rtol, chains)


def explain_pairs(scores, z, *, level: str, coefficient: str, method: str = "both", tie_threshold: float = 0.0,
                  undefined: str = "skip", rtol: float = TIE_RTOL, engine: str = "auto"):
    """Which route of the route table computes each metric pair of an all-pairs permutation test, and why.

    ``scores`` (P, N, M) the metrics, ``z`` (N, M) the human, as for
    :func:`metaeval.stats.significance.pairs.pairwise_tests` with ``test='permutation'``: the metrics are
    standardized and every metric is kept on the cells where all are present, as that function does. Returns a
    :class:`metaeval.stats.kernels.routes.PairRouting` (``.text(names)`` prints it). Nothing is resampled: the
    kernels are built (their set-up cost is paid) on the draws of 1 resample. When the metrics are missing on
    different cells, ``pairwise_tests`` tests each pair on its own common cells (one pair's own kernel,
    ``ONE_PAIR_ROUTES``, or the reference path) and this explanation, which sees cells with NaN, reports the
    reference path for every pair.
    """
    scores = np.asarray(scores, dtype=float)
    z = np.asarray(z, dtype=float)
    valid = np.isfinite(scores) & np.isfinite(z)
    if bool((valid == valid[0]).all()):
        scores, z = np.where(valid[0], scores, np.nan), np.where(valid[0], z, np.nan)
    std = np.stack([standardize(scores[i], f"scores[{i}]") for i in range(scores.shape[0])])
    draws = permutation_draws(scores.shape[1], scores.shape[2], method=method, n_resamples=1, rng=0)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    return _routes.choose_pair_routes(std, z, draws, kw, engine, rtol)
