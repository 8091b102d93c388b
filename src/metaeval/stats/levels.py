"""Correlation levels: how the systems x inputs score matrices are turned into correlations.

``X`` holds the metric's scores and ``Z`` the human scores, each of shape ``(N systems, M inputs)``
with NaN for a missing score, optionally preceded by batch axes (resamples). ``CORR`` is any coefficient
of :mod:`metaeval.stats.coefficients`. The levels are

* ``system``: ``CORR(rowmean X, rowmean Z)``, one correlation over the N system scores;
* ``summary`` (aliases ``input``, ``segment``): ``mean_j CORR(X[:, j], Z[:, j])``, the mean over inputs of
  the correlation across systems ("grouped by item");
* ``global``: ``CORR(vec X, vec Z)`` over the cells where both are present ("no grouping");
* ``by-system``: ``mean_i CORR(X[i, :], Z[i, :])``, the mean over systems of the correlation across
  inputs ("grouped by system", as in MT segment-level meta-evaluation).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError
from metaeval.stats.coefficients import (
    canonical_coefficient,
    check_tie_threshold,
    correlation_rows,
)
from metaeval.vocabulary import (
    LEVEL_ALIASES,
    LEVELS,
    UNDEFINED_POLICIES,
    canonical_level,
    check_undefined,
)

__all__ = ["LEVELS", "LEVEL_ALIASES", "UNDEFINED_POLICIES", "LevelCorrelation", "canonical_level", "level_correlation", "system_means"]


ArrayOrScalar = Union[np.ndarray, np.floating, np.integer]


@dataclass(frozen=True)
class LevelCorrelation:
    """A level correlation and the counts behind it (scalars, or arrays of the batch shape).

    Attributes
    ----------
    statistic : float or numpy.ndarray
        The correlation; NaN when undefined.
    n_used : int or numpy.ndarray
        Groups that entered the statistic: systems at system level, cells at global level, inputs at
        summary level and systems at by-system level (including groups counted as 0).
    n_skipped : int or numpy.ndarray
        Groups whose correlation is undefined: at summary / by-system level every group with fewer than
        2 valid pairs or a constant vector (whether left out or counted as 0); at system level the
        systems without any score; at global level the cells with a human score but no metric score.
    n_zeroed : int or numpy.ndarray
        Undefined groups counted as 0 (``undefined='zero'``); always 0 otherwise.
    n_inputs_dropped : int or numpy.ndarray
        System level, judged-subset mode: inputs with at least one human score that were left out for
        every system because some system lacks ``x`` or ``z`` there; 0 in every other case.
    """

    statistic: ArrayOrScalar
    n_used: ArrayOrScalar
    n_skipped: ArrayOrScalar
    n_zeroed: ArrayOrScalar
    n_inputs_dropped: ArrayOrScalar


def level_correlation(
    x,
    z,
    *,
    level: str,
    coefficient: str,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    tie_threshold: float = 0.0,
) -> LevelCorrelation:
    """Correlation between metric scores ``x`` and human scores ``z`` at one level, batched.

    Parameters
    ----------
    x : array_like, shape (..., N, Mx)
        Metric scores, systems by inputs, NaN for missing; leading axes are a batch (e.g. resamples).
    z : array_like, shape (..., N, Mz)
        Human scores; leading axes broadcast against those of ``x``. ``Mz == Mx`` unless
        ``full_test_set``.
    level : str
        ``'system'``, ``'summary'`` (or ``'input'``, ``'segment'``), ``'global'`` or ``'by-system'``.
    coefficient : str
        A name of :data:`metaeval.stats.coefficients.COEFFICIENTS` (or ``'kendall'``).
    undefined : {'skip', 'zero'}, optional
        Summary and by-system levels: a group with at least 2 valid pairs whose correlation is undefined
        (a constant vector) is left out of the mean (``'skip'``, default) or counted as 0 (``'zero'``).
        Groups with fewer than 2 valid pairs are always left out. Both are counted in ``n_skipped``.
    full_test_set : bool, optional
        System level only. False (default, judged subset): only cells where both ``x`` and ``z`` are
        present are used, and the inputs must be the same for every system, so an input where some
        system lacks ``x`` or ``z`` is dropped for all systems (counted in ``n_inputs_dropped``). True:
        each system's metric score is the mean over all its own present ``x`` cells (``Mx`` may exceed
        ``Mz``, e.g. the whole test set) and its human score the mean over its own present ``z`` cells.
    tie_threshold : float, optional
        Metric tie threshold of the pairwise coefficients, see
        :func:`metaeval.stats.coefficients.correlation`.

    Returns
    -------
    LevelCorrelation
        ``statistic``, ``n_used``, ``n_skipped``, ``n_zeroed``, ``n_inputs_dropped``: numpy scalars for
        2-D input, arrays of the batch shape otherwise.

    Raises
    ------
    ParameterError
        For an unknown level, coefficient or policy, or arrays of incompatible shapes.

    Notes
    -----
    With ``J`` the inputs used (judged subset), ``xbar_i = mean_{j in J} X_ij``:

    * system: ``CORR(xbar, zbar)`` over systems;
    * summary: ``(1 / |G|) sum_{j in G} CORR(X[:, j], Z[:, j])``, ``G`` the inputs whose correlation is
      defined (plus, under ``'zero'``, the degenerate inputs with value 0);
    * global: ``CORR(vec X, vec Z)`` over cells present in both;
    * by-system: as summary with the roles of systems and inputs exchanged.

    Summary level silently averaging over different inputs for different metrics is a known pitfall:
    compare ``n_used`` / ``n_skipped`` of the metrics compared.

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. Transactions of the ACL 9, 1132-1146.
    Freitag, M. et al. (2021). Results of the WMT21 Metrics Shared Task. WMT 2021 (grouping by item /
    by system / no grouping).

    Examples
    --------
    >>> x = [[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [3.0, 3.0, 5.0]]
    >>> z = [[1.0, 1.0, 2.0], [2.0, 3.0, 1.0], [3.0, 2.0, 3.0]]
    >>> out = level_correlation(x, z, level="summary", coefficient="pearson")
    >>> round(float(out.statistic), 4), int(out.n_used), int(out.n_skipped)
    (0.3333, 3, 0)
    """
    x, z, level, coefficient, undefined, full_test_set, tie_threshold = _level_correlation_iv(
        x, z, level, coefficient, undefined, full_test_set, tie_threshold
    )
    batch = x.shape[:-2]
    if level == "system":
        out = _system(x, z, coefficient, full_test_set, tie_threshold)
    elif level == "global":
        out = _global(x, z, coefficient, tie_threshold)
    else:
        if level == "summary":  # groups are the inputs: correlate columns
            x, z = np.swapaxes(x, -1, -2), np.swapaxes(z, -1, -2)
        out = _grouped(x, z, coefficient, undefined, tie_threshold)
    return LevelCorrelation(*(np.reshape(v, batch)[()] for v in out))


def _level_correlation_iv(x, z, level, coefficient, undefined, full_test_set, tie_threshold):
    level = canonical_level(level)
    coefficient = canonical_coefficient(coefficient)
    undefined = check_undefined(undefined)
    if not isinstance(full_test_set, (bool, np.bool_)):
        raise ParameterError(f"`full_test_set` must be True or False; got {full_test_set!r}.")
    full_test_set = bool(full_test_set)
    if full_test_set and level != "system":
        raise ParameterError(
            f"`full_test_set` must be False at level {level!r} (it applies to the system level); got True."
        )
    tie_threshold = check_tie_threshold(tie_threshold, coefficient)
    x = np.asarray(x, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    if x.ndim < 2:
        raise ParameterError(f"`x` must be an array of shape (..., systems, inputs); got shape {x.shape}.")
    n, m = x.shape[-2:]
    expected = f"(..., {n}, {'M' if full_test_set else m})"
    try:
        if z.ndim < 2 or z.shape[-2] != n or (not full_test_set and z.shape[-1] != m):
            raise ValueError
        batch = np.broadcast_shapes(x.shape[:-2], z.shape[:-2])
    except ValueError:
        raise ParameterError(f"`z` must have shape {expected} to match `x`; got shape {z.shape}.") from None
    x = np.broadcast_to(x, batch + x.shape[-2:])
    z = np.broadcast_to(z, batch + z.shape[-2:])
    return x, z, level, coefficient, undefined, full_test_set, tie_threshold


def _rows(a: np.ndarray) -> np.ndarray:
    return np.reshape(a, (int(np.prod(a.shape[:-1])), a.shape[-1]))


def system_means(x, z, *, full_test_set: bool = False):
    """The system scores the system level correlates: ``(xbar, zbar, n_inputs_dropped)``.

    Judged-subset mode (default): both are averaged over the same inputs, those where every system has
    both ``x`` and ``z``; ``n_inputs_dropped`` counts the inputs with a human score left out because some
    system lacks one of the two there. Full-test-set mode (Deutsch, Dror & Roth 2022): ``x`` over every
    input it scored, ``z`` over every judged input, per system. The one system-mean computation of
    metaeval: the levels, the kernels and the report's system tables use it.
    """
    vx, vz = np.isfinite(x), np.isfinite(z)
    if full_test_set:
        cx, cz = vx.sum(axis=-1), vz.sum(axis=-1)
        dropped = np.zeros(x.shape[:-2], dtype=np.int64)
    else:
        vx = vz = vx & vz
        used = vx.all(axis=-2, keepdims=True)  # inputs complete for every system
        dropped = (np.isfinite(z).any(axis=-2) & ~used[..., 0, :]).sum(axis=-1)
        vx = vz = np.broadcast_to(used, x.shape)
        cx = cz = vx.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        xbar = np.where(vx, x, 0.0).sum(axis=-1) / cx
        zbar = np.where(vz, z, 0.0).sum(axis=-1) / cz
    return xbar, zbar, dropped


def _system(x, z, coefficient, full_test_set, tie_threshold):
    n_systems = x.shape[-2]
    xbar, zbar, dropped = system_means(x, z, full_test_set=full_test_set)
    r = correlation_rows(_rows(xbar), _rows(zbar), coefficient, tie_threshold)
    n_used = (np.isfinite(xbar) & np.isfinite(zbar)).sum(axis=-1)
    zeros = np.zeros_like(n_used)
    return r, n_used, n_systems - n_used, zeros, dropped


def _global(x, z, coefficient, tie_threshold):
    batch = x.shape[:-2]
    xv = np.reshape(x, batch + (-1,))
    zv = np.reshape(z, batch + (-1,))
    r = correlation_rows(_rows(xv), _rows(zv), coefficient, tie_threshold)
    fx, fz = np.isfinite(xv), np.isfinite(zv)
    n_used = (fx & fz).sum(axis=-1)
    skipped = (fz & ~fx).sum(axis=-1)
    zeros = np.zeros_like(n_used)
    return r, n_used, skipped, zeros, zeros


def _grouped(x, z, coefficient, undefined, tie_threshold):
    """Mean over the groups (rows of the last two axes) of the correlation along the last axis."""
    groups = x.shape[-2]
    r = correlation_rows(_rows(x), _rows(z), coefficient, tie_threshold).reshape(x.shape[:-1])
    defined = ~np.isnan(r)
    n_defined = defined.sum(axis=-1)
    if undefined == "zero":
        enough = (np.isfinite(x) & np.isfinite(z)).sum(axis=-1) >= 2
        n_zeroed = (~defined & enough).sum(axis=-1)
    else:
        n_zeroed = np.zeros_like(n_defined)
    n_used = n_defined + n_zeroed
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = np.where(n_used > 0, np.where(defined, r, 0.0).sum(axis=-1) / n_used, np.nan)
    return stat, n_used, groups - n_defined, n_zeroed, np.zeros_like(n_defined)
