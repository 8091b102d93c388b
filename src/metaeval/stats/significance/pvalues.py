"""P-values of a single correlation: is the metric related to the human scores at all, at one level?

H0: the metric's scores carry no information about the human scores at the level considered.

Analytic (:func:`analytic_pvalue`)
    The p-value scipy reports for the vectors a level correlates: ``pearsonr`` (exact, from the beta
    distribution of r under bivariate normality), ``spearmanr`` (Student t with ``n - 2`` degrees of
    freedom) and ``kendalltau`` (variant b or c; exact for small untied samples, the normal
    approximation otherwise). Defined at the levels that correlate one vector pair: ``system`` (the N
    system means), ``global`` (the cells) and ``partial`` (the within-system residuals: scipy on the
    residual vectors, exactly what FRANK's evaluation script reports, which does not subtract the
    ``G - 1`` degrees of freedom spent on the system means). An average of per-group correlations
    (``summary``, ``by-system``) has no such null distribution, and neither have ``kendall-a`` and the
    pairwise coefficients: there the analytic p-value is NaN (use the permutation p-value).

Permutation (:func:`permutation_pvalue`)
    The metric's scores are shuffled among the positions where both scores are present, within the
    groups the level keeps apart, and the level statistic recomputed: ``system``: the system means
    among systems; ``global``: all cells; ``summary``: within each input (across systems);
    ``by-system`` and ``partial``: within each system (across inputs; a within-system shuffle keeps
    each system's mean, so the null keeps the system effect that the partial level removes).
    ``p = (1 + #{extreme}) / (1 + k)`` over the k resamples with a defined statistic, with the
    tolerance of :func:`metaeval.stats.significance.permutation.count_extreme`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.stats.correlations.levels import level_correlation, system_means, system_residuals
from metaeval.stats.significance.permutation import monte_carlo_pvalue
from metaeval.stats.resampling.draws import batch_slices, default_batch
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["ANALYTIC_COEFFICIENTS", "ANALYTIC_LEVELS", "PermutationPValue", "analytic_pvalue",
           "permutation_pvalue"]

ANALYTIC_LEVELS = ("system", "global", "partial")
"""Levels whose statistic is one correlation of one vector pair, hence has scipy's p-value."""

ANALYTIC_COEFFICIENTS = ("pearson", "spearman", "kendall-b", "kendall-c")
"""Coefficients with an analytic p-value in scipy."""


def level_vectors(x, z, *, level: str, full_test_set: bool = False):
    """The paired vectors a one-vector level correlates (present in both), or None for grouped levels."""
    if level == "system":
        xbar, zbar, _ = system_means(x, z, full_test_set=full_test_set)
        keep = np.isfinite(xbar) & np.isfinite(zbar)
        return xbar[keep], zbar[keep]
    if level == "partial":
        x, z = system_residuals(x, z)
    if level in ("global", "partial"):
        keep = np.isfinite(x) & np.isfinite(z)
        return x[keep], z[keep]
    return None


def analytic_pvalue(x, z, *, level: str, coefficient: str, alternative: str = "two-sided",
                    full_test_set: bool = False, statistic: float | None = None, rtol: float = TIE_RTOL) -> float:
    """scipy's p-value of the correlation of ``x`` and ``z`` at ``level`` (NaN where none applies).

    Arrays are validated 2-D (N, M) matrices, NaN = missing; ``level`` and ``coefficient`` canonical.
    NaN when the level or coefficient has no analytic p-value (see the module notes) or when the
    correlation is undefined (fewer than 3 pairs, or a constant vector). ``statistic``: the level
    correlation when the caller has it (computed here otherwise, with the relative tie tolerance ``rtol``); it
    only decides undefinedness.
    """
    if level not in ANALYTIC_LEVELS or coefficient not in ANALYTIC_COEFFICIENTS:
        return float("nan")
    u, v = level_vectors(x, z, level=level, full_test_set=full_test_set)
    if statistic is None:
        statistic = level_correlation(x, z, level=level, coefficient=coefficient,
                                      full_test_set=full_test_set, rtol=rtol).statistic
    if u.size < 3 or not np.isfinite(statistic):
        return float("nan")
    from scipy import stats

    if coefficient == "pearson":
        out = stats.pearsonr(u, v, alternative=alternative)
    elif coefficient == "spearman":
        out = stats.spearmanr(u, v, alternative=alternative)
    else:
        out = stats.kendalltau(u, v, variant=coefficient[-1], alternative=alternative)
    return float(out.pvalue)


@dataclass(frozen=True)
class PermutationPValue:
    """A permutation p-value of one correlation.

    Attributes
    ----------
    statistic : float
        The observed level correlation.
    pvalue : float
        ``(1 + #{extreme}) / (1 + k)`` over the k resamples with a defined statistic; NaN if the observed
        statistic is undefined or every resample is.
    n_resamples_dropped : int
        Resamples whose statistic was undefined.
    null_distribution : numpy.ndarray
        The defined resampled statistics.
    """

    statistic: float
    pvalue: float
    n_resamples_dropped: int
    null_distribution: np.ndarray


def _shuffle_within_rows(x: np.ndarray, valid: np.ndarray, rng: np.random.Generator, k: int) -> np.ndarray:
    """``k`` copies of ``x`` (R, L), each row's values at its ``valid`` positions randomly permuted."""
    keys = rng.random((k,) + x.shape)
    keys[:, ~valid] = np.inf
    source = np.argsort(keys, axis=-1, kind="stable")  # valid positions in random order first
    target = np.argsort(~valid, axis=-1, kind="stable")  # valid positions in order first
    out = np.broadcast_to(x, (k,) + x.shape).copy()
    moved = np.take_along_axis(np.broadcast_to(x, (k,) + x.shape), source, axis=-1)
    np.put_along_axis(out, np.broadcast_to(target, (k,) + x.shape), moved, axis=-1)
    return np.where(valid, out, x)


def permutation_pvalue(x, z, *, level: str, coefficient: str, n_resamples: int, rng: np.random.Generator,
                       alternative: str = "two-sided", undefined: str = "skip", full_test_set: bool = False,
                       tie_threshold: float = 0.0, batch: int | None = None,
                       rtol: float = TIE_RTOL) -> PermutationPValue:
    """The permutation p-value of the level correlation of ``x`` and ``z`` (see the module notes).

    Arrays are validated 2-D (N, M) matrices, options canonical, ``rng`` a Generator. The draws are
    generated batch after batch from one stream, so the result does not depend on ``batch``.
    """
    options = dict(coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    observed = float(level_correlation(x, z, level=level, full_test_set=full_test_set, **options).statistic)
    if level == "system":  # the system means, as one row: a shuffle among systems
        xbar, zbar, _ = system_means(x, z, full_test_set=full_test_set)
        x, z, level = xbar[None, :], zbar[None, :], "global"
    elif level == "global":
        x, z = x.reshape(1, -1), z.reshape(1, -1)
    transpose = level == "summary"  # shuffle within each input: rows of the transpose
    xs, zs = (x.T, z.T) if transpose else (x, z)
    valid = np.isfinite(xs) & np.isfinite(zs)
    size = default_batch(xs.size) if batch is None else batch
    null = []
    for sl in batch_slices(n_resamples, size):
        shuffled = _shuffle_within_rows(xs, valid, rng, sl.stop - sl.start)
        if transpose:
            shuffled = np.swapaxes(shuffled, -1, -2)
        null.append(np.atleast_1d(level_correlation(shuffled, z, level=level, **options).statistic))
    null = np.concatenate(null)
    kept = null[np.isfinite(null)]
    return PermutationPValue(statistic=observed, pvalue=monte_carlo_pvalue(kept, observed, alternative),
                             n_resamples_dropped=int(null.size - kept.size), null_distribution=kept)
