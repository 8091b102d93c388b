"""Bootstrap confidence intervals for level correlations (BOOT-SYSTEMS, BOOT-INPUTS, BOOT-BOTH).

For a metric ``X`` and human scores ``Z`` (``N`` systems x ``M`` inputs) and a level correlation
``r = L(X, Z)`` (:func:`metaeval.stats.correlations.levels.level_correlation`), the bootstrap distribution is
``r*_s = L(X[I_s][:, J_s], Z[I_s][:, J_s])`` for ``s = 1..k`` with the row indices ``I_s`` and/or column
indices ``J_s`` of :func:`metaeval.stats.resampling.draws.bootstrap_draws` (Deutsch, Dror & Roth, 2021, Sec. 4).
A resampled matrix may contain a system several times: for Kendall those copies are tied pairs, for
Pearson they are extra points, exactly as if the resampled matrix had been built and correlated.
Resamples whose statistic is undefined are dropped and counted.

Intervals: the percentile interval ``[q_{a/2}, q_{1-a/2}]`` of the defined ``r*_s`` (``a = 1 -
confidence_level``, linear interpolation between order statistics), or the bias-corrected and accelerated
(BCa) interval of Efron (1987) with the acceleration estimated by the jackknife over the resampled units.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from metaeval import defaults
from metaeval.errors import (
    DegenerateWarning,
    ParameterError,
    check_choice,
    check_int,
    check_probability,
)
from metaeval.stats import kernels as _kernels
from metaeval.stats.correlations import levels as _levels
from metaeval.stats.correlations.coefficients import canonical_coefficient
from metaeval.stats.corpus import CorpusScores, corpus_columns, leave_one_out
from metaeval.stats.resampling.draws import (
    BootstrapDraws,
    as_generator,
    batch_slices,
    bootstrap_draws,
    check_batch,
)
from metaeval.vocabulary import INTERVALS, check_interval, check_method, check_undefined
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = [
    "INTERVALS",
    "ENGINES",
    "MIN_DISTINCT_SYSTEMS",
    "BootstrapOutcome",
    "as_matrix",
    "bootstrap_interval",
    "cells_per_resample",
    "common_iv",
    "bootstrap_samples",
    "percentile_interval",
    "bca_interval",
]

#: Interval constructions.
#: "auto" uses a fast exact kernel when one applies; "reference" always materializes the resamples.
ENGINES = ("auto", "reference")
#: BOOT-SYSTEMS/BOTH warn when more than :data:`DEGENERATE_FRACTION` of the resamples contain fewer
#: distinct systems than this, or are exactly +-1 (Deutsch et al. 2021: degenerate intervals for small N).
MIN_DISTINCT_SYSTEMS = 5
DEGENERATE_FRACTION = 0.05


@dataclass(frozen=True)
class BootstrapOutcome:
    """Result of :func:`bootstrap_interval`.

    Attributes
    ----------
    statistic : float
        The level correlation on the original data.
    low, high : float
        Interval bounds (NaN if no resample was defined or the statistic is undefined).
    confidence_level : float
    interval : str
        "percentile" or "bca".
    method : str
        "systems", "inputs" or "both".
    samples : ndarray
        The defined bootstrap statistics, in draw order.
    n_resamples : int
        Number of resamples drawn.
    n_resamples_dropped : int
        Resamples whose statistic was undefined (dropped).
    n_used, n_skipped : int
        Groups used / skipped by the original statistic (see :class:`metaeval.stats.correlations.levels.LevelCorrelation`).
    """

    statistic: float
    low: float
    high: float
    confidence_level: float
    interval: str
    method: str
    samples: np.ndarray
    n_resamples: int
    n_resamples_dropped: int
    n_used: int | None = None
    n_skipped: int | None = None

    @property
    def ci(self) -> tuple[float, float]:
        return (self.low, self.high)


# ----------------------------------------------------------------------------------------------------
# validation


def as_matrix(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 2:
        raise ParameterError(f"`{name}` must be a 2-dimensional array (systems x inputs); got shape {arr.shape!r}.")
    return arr


def common_iv(x, z, level, coefficient, undefined, full_test_set, tie_threshold):
    x = x if isinstance(x, CorpusScores) else as_matrix("x", x)
    z = as_matrix("z", z)
    level = _levels.canonical_level(level)
    coefficient = canonical_coefficient(coefficient)
    undefined = check_undefined(undefined)
    if not isinstance(full_test_set, (bool, np.bool_)):
        raise ParameterError(f"`full_test_set` must be True or False; got {full_test_set!r}.")
    if full_test_set and level != "system":
        raise ParameterError(f"`full_test_set` must be False unless `level` is 'system'; got level {level!r}.")
    if x.shape[0] != z.shape[0] or (not full_test_set and x.shape != z.shape):
        raise ParameterError(f"`z` must have the shape of `x` {x.shape!r}; got {z.shape!r}.")
    try:
        tie_threshold = float(tie_threshold)
    except (TypeError, ValueError):
        raise ParameterError(f"`tie_threshold` must be a number >= 0; got {tie_threshold!r}.") from None
    if not tie_threshold >= 0:
        raise ParameterError(f"`tie_threshold` must be a number >= 0; got {tie_threshold!r}.")
    if isinstance(x, CorpusScores):
        _levels.check_corpus_level(x, z, level, bool(full_test_set))
    return x, z, level, coefficient, undefined, bool(full_test_set), tie_threshold


# ----------------------------------------------------------------------------------------------------
# the bootstrap distribution


def power_of_two_rescaled(arrays, tie_threshold):
    """``arrays`` divided by one power of two ``2^e`` (``max|v| < 2^e <= 2 max|v|`` over all of them) when
    their largest finite magnitude is outside [2^-400, 2^400], and the metric ``tie_threshold`` with them
    (:func:`metaeval.stats.correlations.coefficients.rescaled`): exact, so no statistic changes, and the sums of squares
    of the kernels and of the reference path neither overflow nor underflow. The arrays themselves (not
    copies) in the common case; arrays of another type (``CorpusScores``) are left alone."""
    if not all(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in arrays):
        return arrays, tie_threshold
    top = max((float(np.max(np.abs(a), initial=0.0, where=~np.isnan(a))) for a in arrays), default=0.0)
    if not np.isfinite(top) or top == 0.0 or 2.0 ** -400 <= top <= 2.0 ** 400:
        return arrays, tie_threshold
    e = int(np.frexp(top)[1])
    return tuple(np.ldexp(a, -e) for a in arrays), (float(np.ldexp(tie_threshold, -e)) if tie_threshold else tie_threshold)


def cells_per_resample(x, coefficient):
    n, m = x.shape
    pairwise = coefficient not in ("pearson", "spearman")
    return n * m * (n if pairwise else 1) * 4


def bootstrap_samples(x, z, *, level, coefficient, draws: BootstrapDraws, undefined="skip", tie_threshold=0.0,
                      full_test_set=False, batch=None, engine="auto", rtol=TIE_RTOL) -> np.ndarray:
    """Statistic of every resample of ``draws``: ``L(X[I_s][:, J_s], Z[I_s][:, J_s])``, NaN if undefined.

    Arrays and options must already be validated (see :func:`bootstrap_interval`). The result does not
    depend on ``batch`` or ``engine`` beyond rounding (the kernels equal the reference to ~1e-15). ``rtol``: the
    relative tie tolerance of the rank statistics.
    """
    (x,), tie_threshold = power_of_two_rescaled((x,), tie_threshold)
    (z,), _ = power_of_two_rescaled((z,), 0.0)
    k = draws.n_resamples
    kernel = None
    pooled_groups = coefficient == "pdp" and level in ("summary", "by-system")  # the kernels average groups
    if engine == "auto" and not pooled_groups:
        kernel = _kernels.bootstrap_kernel(x, z, level=level, coefficient=coefficient, draws=draws,
                                           undefined=undefined, tie_threshold=tie_threshold,
                                           full_test_set=full_test_set, rtol=rtol)
    if kernel is None:
        batch = check_batch(batch, cells_per_resample(x, coefficient))
    else:
        batch = check_batch(batch, kernel.cells, budget=_kernels.KERNEL_BATCH_CELLS)
    out = np.empty(k)
    with _kernels.single_blas_thread():
        for sl in batch_slices(k, batch):
            if kernel is not None:
                out[sl] = kernel.evaluate(_kernels.BatchCache(draws, sl))
            else:
                out[sl] = _reference_batch(x, z, draws, sl, level, coefficient, undefined, tie_threshold,
                                           full_test_set, rtol)
    return out


def _reference_batch(x, z, draws, sl, level, coefficient, undefined, tie_threshold, full_test_set, rtol):
    row_units, col_units = draws.row_indices(sl), draws.col_indices(sl)
    rows = row_units[:, :, None]
    xs = x[rows, col_units[:, None, :]]
    zs = z[rows, draws.col_indices(sl, human=True)[:, None, :]]
    res = _levels.level_correlation(xs, zs, level=level, coefficient=coefficient, undefined=undefined,
                                    full_test_set=full_test_set, tie_threshold=tie_threshold,
                                    row_units=row_units if draws.rows is not None else None,
                                    col_units=col_units if draws.cols is not None else None, rtol=rtol)
    return np.asarray(res.statistic, dtype=np.float64)


# ----------------------------------------------------------------------------------------------------
# intervals


def percentile_interval(samples: np.ndarray, confidence_level: float) -> tuple[float, float]:
    """Percentile interval of the finite ``samples`` (NaN, NaN if there are none)."""
    s = np.asarray(samples, dtype=np.float64)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return (np.nan, np.nan)
    a = 1.0 - confidence_level
    low, high = np.percentile(s, [100 * a / 2, 100 * (1 - a / 2)])
    return (float(low), float(high))


def _acceleration(groups) -> float:
    """Multi-sample jackknife acceleration: ``sum U^3 / n^3 / (6 (sum U^2 / n^2)^1.5)``.

    ``groups`` is a list of arrays of leave-one-out statistics, one per independently resampled sample
    (systems, inputs); ``U_i = (n - 1)(mean - theta_(i))`` are the jackknife influence values
    (Efron & Tibshirani 1993, Sec. 14.3 and 22.6). For one sample this is the usual
    ``sum d^3 / (6 (sum d^2)^1.5)`` with ``d_i = mean - theta_(i)``.
    """
    num = den = 0.0
    for g in groups:
        g = np.asarray(g, dtype=np.float64)
        g = g[np.isfinite(g)]
        n = g.size
        if n < 2:
            continue
        u = (n - 1) * (g.mean() - g)
        num += (u**3).sum() / n**3
        den += (u**2).sum() / n**2
    if den <= 0:
        return 0.0
    return float(num / (6.0 * den**1.5))


def bca_interval(samples: np.ndarray, statistic: float, acceleration: float,
                 confidence_level: float) -> tuple[float, float]:
    """BCa interval (Efron 1987) from the defined ``samples``, the original ``statistic`` and ``acceleration``.

    The bias correction counts ties with the original statistic as half below, half above:
    ``z0 = Phi^-1((#{r* < r} + #{r* = r} / 2) / B)``, which keeps discrete statistics (Kendall) unbiased.
    NaN bounds when ``z0`` is infinite (every resample on one side of the statistic).
    """
    s = np.asarray(samples, dtype=np.float64)
    s = s[np.isfinite(s)]
    if s.size == 0 or not np.isfinite(statistic):
        return (np.nan, np.nan)
    prop = ((s < statistic).sum() + 0.5 * (s == statistic).sum()) / s.size
    if prop <= 0 or prop >= 1:
        return (np.nan, np.nan)
    z0 = special.ndtri(prop)
    a = 1.0 - confidence_level
    bounds = []
    for q in (a / 2, 1 - a / 2):
        zq = special.ndtri(q)
        adj = special.ndtr(z0 + (z0 + zq) / (1 - acceleration * (z0 + zq)))
        bounds.append(float(np.percentile(s, 100 * adj)))
    return (bounds[0], bounds[1])


def _jackknife(x, z, level, coefficient, method, undefined, tie_threshold, full_test_set, rtol):
    """Leave-one-out statistics over the resampled units, one array per independent sample."""

    if isinstance(x, CorpusScores):
        def one(xs, zs):
            return float(_levels.level_correlation(xs, zs, level=level, coefficient=coefficient,
                                                   full_test_set=full_test_set, tie_threshold=tie_threshold,
                                                   rtol=rtol).statistic)

        return leave_one_out(x, z, one, systems=method in ("systems", "both"), inputs=method in ("inputs", "both"),
                             full_test_set=full_test_set)

    def stat(xs, zs):
        res = _levels.level_correlation(xs, zs, level=level, coefficient=coefficient, undefined=undefined,
                                        full_test_set=full_test_set, tie_threshold=tie_threshold, rtol=rtol)
        return np.asarray(res.statistic, dtype=np.float64)

    def drop(n):
        idx = np.arange(n)
        return np.stack([np.delete(idx, i) for i in range(n)])

    groups = []
    n, m = x.shape
    if method in ("systems", "both"):
        keep = drop(n)
        groups.append(stat(x[keep], z[keep]))
    if method in ("inputs", "both"):
        if full_test_set:
            keep_x, keep_z = drop(m), drop(z.shape[1])
            groups.append(stat(x[:, keep_x].transpose(1, 0, 2), np.broadcast_to(z, (m,) + z.shape)))
            groups.append(stat(np.broadcast_to(x, (z.shape[1],) + x.shape), z[:, keep_z].transpose(1, 0, 2)))
        else:
            keep = drop(m)
            groups.append(stat(x[:, keep].transpose(1, 0, 2), z[:, keep].transpose(1, 0, 2)))
    return groups


# ----------------------------------------------------------------------------------------------------
# public entry point


def bootstrap_interval(
    x,
    z,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    interval: str = defaults.INTERVAL,
    rng: Any = None,
    batch: int | None = None,
    full_test_set: bool = False,
    undefined: str = defaults.UNDEFINED,
    tie_threshold: float = 0.0,
    engine: str = "auto",
    rtol: float = TIE_RTOL,
) -> BootstrapOutcome:
    """Bootstrap confidence interval of a level correlation (Deutsch, Dror & Roth 2021).

    Parameters
    ----------
    x, z : array_like, shape (N, M)
        Metric and human scores, systems x inputs, NaN = missing. In full-test-set mode ``x`` is
        ``(N, M_test)`` and ``z`` is ``(N, M_jud)``.
    level : {"system", "summary", "global", "by-system"}
        The level correlation ``L`` (aliases "input" and "segment" mean "summary").
    coefficient : str
        Any coefficient of :mod:`metaeval.stats.correlations.coefficients` ("kendall" = "kendall-b").
    method : {"systems", "inputs", "both"}
        BOOT-SYSTEMS resamples rows ``X*[a, :] = X[I_a, :]``; BOOT-INPUTS resamples columns
        ``X*[:, b] = X[:, J_b]``; BOOT-BOTH resamples both, ``X*[a, b] = X[I_a, J_b]``. ``Z`` is
        resampled with the same indices (full-test-set mode: the humans' inputs independently).
    n_resamples : int
        Number of resamples ``k``.
    confidence_level : float in (0, 1)
    interval : {"percentile", "bca"}
        Percentile interval, or BCa (Efron 1987) with jackknife acceleration over the resampled units
        (systems, inputs, or both combined as independent samples).
    rng : None, int or numpy.random.Generator
    batch : int, optional
        Resamples evaluated at once (bounds memory); results are identical for any value.
    full_test_set : bool
        System level only: average the metric over its ``M_test`` inputs and the humans over their
        ``M_jud`` inputs.
    undefined : {"skip", "zero"}
        How the summary / by-system levels treat undefined per-input correlations.
    tie_threshold : float
        Passed to the coefficient (tau-eq / acc-eq).
    engine : {"auto", "reference"}
        "auto" uses a fast exact kernel where one applies (:mod:`metaeval.stats.kernels`).
    rtol : float, optional
        The relative tie tolerance of the rank statistics (:mod:`metaeval.stats.correlations.ties`).

    Returns
    -------
    BootstrapOutcome

    Warns
    -----
    DegenerateWarning
        If the statistic or every resample is undefined, or (BOOT-SYSTEMS/BOTH) more than 5% of the
        resamples have fewer than 5 distinct systems or a statistic of exactly +-1.

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9, 1132-1146.
    Efron, B. (1987). Better Bootstrap Confidence Intervals. JASA 82(397), 171-185.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(20, 30)); x = z + rng.normal(size=(20, 30))
    >>> out = bootstrap_interval(x, z, level="system", coefficient="pearson", method="both", rng=0)
    >>> bool(out.low < out.statistic < out.high)
    True
    """
    x, z, level, coefficient, undefined, full_test_set, tie_threshold = common_iv(
        x, z, level, coefficient, undefined, full_test_set, tie_threshold)
    method = check_method(method)
    k = check_int("n_resamples", n_resamples, minimum=1)
    confidence_level = check_probability("confidence_level", confidence_level)
    interval = check_interval(interval)
    engine = check_choice("engine", engine, ENGINES)
    gen = as_generator(rng)
    check_batch(batch, 1)
    if isinstance(x, CorpusScores):  # the inputs its system scores are over, complete: the kernel's data
        x, z = corpus_columns(x, z, full_test_set=full_test_set)

    observed = _kernels.point_correlation(x, z, level=level, coefficient=coefficient, undefined=undefined,
                                          full_test_set=full_test_set, tie_threshold=tie_threshold, rtol=rtol)
    statistic = float(observed.statistic)
    n_used, n_skipped = int(observed.n_used), int(observed.n_skipped)

    # an integer seed is passed as such: the draws of equal seeds are then shared (see bootstrap_draws)
    draws = bootstrap_draws(x.shape[0], x.shape[1], method=method, n_resamples=k, rng=gen if rng is None else rng,
                            n_inputs_human=z.shape[1] if full_test_set else None)
    samples = bootstrap_samples(x, z, level=level, coefficient=coefficient, draws=draws, undefined=undefined,
                                tie_threshold=tie_threshold, full_test_set=full_test_set, batch=batch,
                                engine=engine, rtol=rtol)
    defined = samples[np.isfinite(samples)]
    dropped = int(k - defined.size)

    if not np.isfinite(statistic):
        warnings.warn("The correlation is undefined on the original data; the interval is NaN.",
                      DegenerateWarning, stacklevel=2)
        low = high = np.nan
    elif defined.size == 0:
        warnings.warn(f"All {k} bootstrap resamples have an undefined correlation; the interval is NaN.",
                      DegenerateWarning, stacklevel=2)
        low = high = np.nan
    else:
        _warn_degenerate(draws, defined, stacklevel=3)
        if interval == "percentile":
            low, high = percentile_interval(defined, confidence_level)
        else:
            groups = _jackknife(x, z, level, coefficient, method, undefined, tie_threshold, full_test_set, rtol)
            low, high = bca_interval(defined, statistic, _acceleration(groups), confidence_level)
            if not (np.isfinite(low) and np.isfinite(high)):
                warnings.warn("The BCa interval is undefined (every resample lies on one side of the "
                              "statistic); use interval='percentile'.", DegenerateWarning, stacklevel=2)
    return BootstrapOutcome(statistic, float(low), float(high), confidence_level, interval, method, defined, k,
                            dropped, n_used, n_skipped)


def _warn_degenerate(draws: BootstrapDraws, defined: np.ndarray, stacklevel: int) -> None:
    if draws.rows is None:
        return
    few = float(np.mean(draws.distinct_systems() < MIN_DISTINCT_SYSTEMS))
    at_one = float(np.mean(np.abs(defined) == 1.0))
    if few > DEGENERATE_FRACTION or at_one > DEGENERATE_FRACTION:
        warnings.warn(
            f"Bootstrap resampling of {draws.n_systems} systems is degenerate: {few:.0%} of the resamples "
            f"have fewer than {MIN_DISTINCT_SYSTEMS} distinct systems and {at_one:.0%} have a correlation of "
            "exactly +-1; the interval is unreliable (Deutsch et al. 2021).",
            DegenerateWarning, stacklevel=stacklevel)
