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
    common_iv,
    bootstrap_samples,
    power_of_two_rescaled,
)
from metaeval.stats.significance.common import common_cells
from metaeval.stats.significance.paired_bootstrap import bootstrap_pvalue
from metaeval.stats.significance.pair_permutations import ProgressSteps, permutation_pairs
from metaeval.stats.significance.permutation import count_extreme, standardize
from metaeval.stats.resampling.draws import (
    as_generator,
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
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["TESTS", "PairwiseOutcome", "adjusted_matrix", "pairwise_tests", "record_bootstrap_pair"]

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
    _, z, level, coefficient, undefined, _, tie_threshold = common_iv(
        scores[0], z, level, coefficient, undefined, False, tie_threshold)
    (scores,), tie_threshold = power_of_two_rescaled((scores,), tie_threshold)
    (z,), _ = power_of_two_rescaled((z,), 0.0)  # exact powers of two: no overflow at 1e160
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
    rtol: float = TIE_RTOL,
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
    rtol : float, optional
        The relative tie tolerance of the rank statistics (:mod:`metaeval.stats.correlations.ties`).
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
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
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
            deltas_s = permutation_pairs(std, z, draws, batch, engine, kw, progress, rtol)
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
        steps = ProgressSteps(progress, k, p if shared else p * (p - 1) // 2)
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


def _permutation_own_cells(scores, z, draws, batch, engine, kw, pair_deltas, progress=None):
    """Permuted and observed deltas of every pair ``i < j`` on the pair's own common cells."""
    from metaeval.stats.significance.permutation import permutation_deltas

    p = scores.shape[0]
    out, observed = {}, {}
    steps = ProgressSteps(progress, draws.n_resamples, p * (p - 1) // 2)
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
