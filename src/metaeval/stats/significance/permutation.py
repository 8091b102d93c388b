"""Permutation test for the difference of two metrics' correlations with the humans.

Test of ``H0: rho(X, Z) = rho(Y, Z)`` against ``H1: rho(X, Z) > rho(Y, Z)`` ("greater"), ``<`` ("less") or
``!=`` ("two-sided"), Deutsch, Dror & Roth (2021), Sec. 5 and Algorithm 2:

0. Keep only the cells where ``X``, ``Y`` and ``Z`` are all present (:mod:`metaeval.stats.significance.common`): both
   correlations, the standardization and the swaps use the same cells.
1. Standardize each metric over those cells, ``X <- (X - mean X) / sd X`` (same for ``Y``),
   so that swapped cells are on a common scale. ``Z`` is left as is.
2. ``delta = L(X, Z) - L(Y, Z)`` with the level correlation ``L``.
3. For ``s = 1..k`` draw a swap mask (:func:`metaeval.stats.resampling.draws.permutation_draws`) and set
   ``X'_s = where(m_s, Y, X)``, ``Y'_s = where(m_s, X, Y)``, ``delta_s = L(X'_s, Z) - L(Y'_s, Z)``.
   PERM-SYSTEMS swaps whole rows, PERM-INPUTS whole columns, PERM-BOTH every cell independently with
   probability 1/2 (nlpstats 0.0.1 swaps rows then columns instead, a different test).
4. ``p = (1 + #{delta_s >= delta - gamma}) / (1 + k')`` for "greater", ``delta_s <= delta + gamma`` for
   "less" and ``|delta_s| >= |delta| - gamma`` for "two-sided", where ``k'`` counts the permutations with
   a defined ``delta_s`` and ``gamma = 100 * eps * |delta|`` absorbs floating-point noise between
   mathematically equal values (as in ``scipy.stats.permutation_test``). The comparison is ``>=``, so
   identical ``X`` and ``Y`` give ``p = 1``; the ``+1`` counts the observed assignment, so ``p > 0``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from metaeval import defaults
from metaeval.errors import (
    DegenerateDataError,
    DegenerateWarning,
    ParameterError,
    check_choice,
    check_int,
)
from metaeval.stats import kernels as _kernels
from metaeval.stats.corpus import CorpusScores
from metaeval.stats.correlations import levels as _levels
from metaeval.stats.correlations import ties
from metaeval.stats.correlations.coefficients import rescaled
from metaeval.stats.correlations.levels import check_corpus_level
from metaeval.stats.resampling.bootstrap import (
    ENGINES,
    as_matrix,
    cells_per_resample,
    common_iv,
    power_of_two_rescaled,
)
from metaeval.stats.resampling.draws import (
    PermutationDraws,
    as_generator,
    batch_slices,
    check_batch,
    permutation_draws,
)
from metaeval.stats.significance.common import common_cells
from metaeval.vocabulary import ALTERNATIVES, canonical_level, check_alternative, check_method
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = [
    "ALTERNATIVES",
    "PermutationOutcome",
    "metric_test_iv",
    "permutation_test",
    "reference_deltas",
    "standardize",
    "permutation_deltas",
    "monte_carlo_pvalue",
]

#: Relative tolerance of the p-value comparisons, in units of machine epsilon (scipy uses 100).
TOLERANCE_EPS = 100


@dataclass(frozen=True)
class PermutationOutcome:
    """Result of :func:`permutation_test`.

    Attributes
    ----------
    delta : float
        ``L(X, Z) - L(Y, Z)`` on the standardized data.
    statistic_x, statistic_y : float
        ``L(X, Z)`` and ``L(Y, Z)``.
    pvalue : float
        Monte Carlo p-value ``(1 + count) / (1 + k')`` (NaN if ``delta`` or every ``delta_s`` is undefined).
    null_distribution : ndarray
        The defined ``delta_s``, in draw order.
    alternative, method : str
    n_resamples : int
        Number of permutations drawn.
    n_resamples_dropped : int
        Permutations whose ``delta_s`` was undefined (dropped).
    """

    delta: float
    statistic_x: float
    statistic_y: float
    pvalue: float
    null_distribution: np.ndarray
    alternative: str
    method: str
    n_resamples: int
    n_resamples_dropped: int


def standardize(x: np.ndarray, name: str = "x") -> np.ndarray:
    """``(x - mean) / sd`` over the non-missing cells; a constant matrix (for Pearson's r,
    :func:`metaeval.stats.correlations.ties.is_constant`) raises DegenerateDataError. Computed on ``x`` scaled by a
    power of two (:func:`metaeval.stats.correlations.coefficients.rescaled`), so any finite magnitude is safe."""
    x = rescaled(x)  # a power of two: exact, and .std() of values above ~1e154 would overflow
    valid = x[np.isfinite(x)]
    if valid.size < 2 or bool(ties.is_constant(valid)):
        raise DegenerateDataError(
            f"`{name}` must have non-zero variance over its non-missing cells to be standardized for a "
            f"permutation test; got a constant metric ({valid.size} non-missing cells)."
        )
    return (x - valid.mean()) / valid.std()


def count_extreme(null: np.ndarray, observed: float, alternative: str) -> int:
    """``#{null >= observed - gamma}`` ("greater"), ``<= observed + gamma`` ("less") or
    ``|null| >= |observed| - gamma`` ("two-sided"), ``gamma = 100 eps |observed|``."""
    gamma = TOLERANCE_EPS * np.finfo(np.float64).eps * abs(observed)
    if alternative == "greater":
        return int(np.sum(null >= observed - gamma))
    if alternative == "less":
        return int(np.sum(null <= observed + gamma))
    return int(np.sum(np.abs(null) >= abs(observed) - gamma))


def monte_carlo_pvalue(null: np.ndarray, observed: float, alternative: str) -> float:
    """``(1 + count_extreme) / (1 + len(null))``; NaN if ``observed`` is NaN or ``null`` is empty."""
    if not np.isfinite(observed) or null.size == 0:
        return float("nan")
    return (1 + count_extreme(null, observed, alternative)) / (1 + null.size)


def permutation_deltas(xs, ys, z, *, level, coefficient, draws: PermutationDraws, undefined="skip",
                       tie_threshold=0.0, batch=None, engine="auto", rtol=TIE_RTOL) -> np.ndarray:
    """``L(X'_s, Z) - L(Y'_s, Z)`` for every mask of ``draws`` (NaN where undefined).

    ``xs`` and ``ys`` must already be standardized and validated; ``rtol``: the relative tie tolerance.
    """
    (xs, ys), tie_threshold = power_of_two_rescaled((xs, ys), tie_threshold)
    (z,), _ = power_of_two_rescaled((z,), 0.0)
    k = draws.n_resamples
    kernel = None
    pooled_groups = coefficient == "pdp" and level in ("summary", "by-system")  # the kernels average groups
    if engine == "auto" and not pooled_groups:
        kernel = _kernels.permutation_kernel(xs, ys, z, level=level, coefficient=coefficient, draws=draws,
                                             undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    if kernel is None:
        batch = check_batch(batch, cells_per_resample(xs, coefficient))
    else:
        batch = check_batch(batch, kernel.cells, budget=_kernels.KERNEL_BATCH_CELLS)
    out = np.empty(k)
    with _kernels.single_blas_thread():
        for sl in batch_slices(k, batch):
            if kernel is not None:
                out[sl] = kernel.deltas(_kernels.BatchCache(draws, sl))
            else:
                rx, ry = reference_deltas(xs, ys, z, draws, sl, level, coefficient, undefined, tie_threshold, rtol)
                out[sl] = rx - ry
    return out


def reference_deltas(xs, ys, z, draws, sl, level, coefficient, undefined, tie_threshold, rtol=TIE_RTOL):
    mask = np.ascontiguousarray(draws.mask(sl))  # C order: the generic sums then do not depend on the batch
    zb = np.broadcast_to(z, mask.shape)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    rx = _levels.level_correlation(np.where(mask, ys, xs), zb, **kw).statistic
    ry = _levels.level_correlation(np.where(mask, xs, ys), zb, **kw).statistic
    return np.asarray(rx, dtype=np.float64), np.asarray(ry, dtype=np.float64)


def metric_test_iv(x, y, z, level, coefficient, method, alternative, n_resamples, undefined, tie_threshold, engine):
    y = y if isinstance(y, CorpusScores) else as_matrix("y", y)
    if isinstance(y, CorpusScores):
        check_corpus_level(y, np.asarray(z, dtype=np.float64), canonical_level(level), False)
    x, z, level, coefficient, undefined, _, tie_threshold = common_iv(
        x, z, level, coefficient, undefined, False, tie_threshold)
    if y.shape != x.shape:
        raise ParameterError(f"`y` must have the shape of `x` {x.shape!r}; got {y.shape!r}.")
    method = check_method(method)
    alternative = check_alternative(alternative)
    k = check_int("n_resamples", n_resamples, minimum=1)
    engine = check_choice("engine", engine, ENGINES)
    return x, y, z, level, coefficient, method, alternative, k, undefined, tie_threshold, engine


def permutation_test(
    x,
    y,
    z,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
    undefined: str = defaults.UNDEFINED,
    tie_threshold: float = 0.0,
    engine: str = "auto",
    rtol: float = TIE_RTOL,
) -> PermutationOutcome:
    """Permutation test of ``H1: rho(X, Z) > rho(Y, Z)`` (Deutsch, Dror & Roth 2021, Algorithm 2).

    Parameters
    ----------
    x, y : array_like, shape (N, M)
        The two metrics' scores (standardized internally, inputs are not modified).
    z : array_like, shape (N, M)
        Human scores.
    level : {"system", "summary", "global", "by-system"}
    coefficient : str
    method : {"systems", "inputs", "both"}
        PERM-SYSTEMS (swap whole rows), PERM-INPUTS (whole columns) or PERM-BOTH (each cell independently).
    alternative : {"greater", "less", "two-sided"}
        "greater" tests ``rho(X, Z) > rho(Y, Z)``.
    n_resamples : int
        Number of random permutations ``k``.
    rng : None, int or numpy.random.Generator
    batch : int, optional
        Permutations evaluated at once; results are identical for any value.
    undefined : {"skip", "zero"}
    tie_threshold : float
    engine : {"auto", "reference"}
        "auto" uses a fast exact kernel where one applies.
    rtol : float, optional
        The relative tie tolerance of the rank statistics (:mod:`metaeval.stats.correlations.ties`).

    Returns
    -------
    PermutationOutcome
        ``pvalue = (1 + #{delta_s >= delta - gamma}) / (1 + k')`` (see the module docstring).

    Raises
    ------
    DegenerateDataError
        If ``x`` or ``y`` has zero variance (cannot be standardized).

    Warns
    -----
    DegenerateWarning
        If ``delta`` or every ``delta_s`` is undefined (the p-value is then NaN).

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9, 1132-1146.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(10, 20))
    >>> out = permutation_test(z + rng.normal(size=z.shape), z + 3 * rng.normal(size=z.shape), z, rng=0)
    >>> out.pvalue < 0.05
    True
    """
    x, y, z, level, coefficient, method, alternative, k, undefined, tie_threshold, engine = metric_test_iv(
        x, y, z, level, coefficient, method, alternative, n_resamples, undefined, tie_threshold, engine)
    if isinstance(x, CorpusScores) or isinstance(y, CorpusScores):
        raise ParameterError("`x` and `y` must be score matrices for a permutation test (it swaps cells, which a "
                             "corpus score does not have; PERM-SYSTEMS of a corpus metric is the test of its system "
                             "scores as (N, 1) matrices); got CorpusScores.")
    gen = as_generator(rng)
    check_batch(batch, 1)
    cells = common_cells(x, y, z)  # the cells where X, Y and Z are all present, for both statistics
    x, y, z = cells.x, cells.y, cells.z
    xs = standardize(x, "x")
    ys = standardize(y, "y")
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    rx, ry = (float(r.statistic) for r in _kernels.point_correlations([xs, ys], z, **kw))
    delta = rx - ry
    draws = permutation_draws(x.shape[0], x.shape[1], method=method, n_resamples=k, rng=gen)
    deltas = permutation_deltas(xs, ys, z, draws=draws, batch=batch, engine=engine, **kw)
    null = deltas[np.isfinite(deltas)]
    pvalue = monte_carlo_pvalue(null, delta, alternative)
    if not np.isfinite(delta):
        warnings.warn("The difference of correlations is undefined on the original data; the p-value is NaN.",
                      DegenerateWarning, stacklevel=2)
    elif null.size == 0:
        warnings.warn(f"All {k} permutations have an undefined difference of correlations; the p-value is NaN.",
                      DegenerateWarning, stacklevel=2)
    return PermutationOutcome(delta, rx, ry, pvalue, null, alternative, method, k, int(k - null.size))
