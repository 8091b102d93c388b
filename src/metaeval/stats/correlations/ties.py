"""The tie rule of every rank statistic in metaeval, in one place.

Two values ``a`` and ``b`` of one vector ``v`` are tied when ``|a - b| <= tol(v)`` with

    ``tol(v) = max(rtol * spread(v), NOISE_RTOL * max|v|)``  (``rtol > 0``; ``tol = 0`` when ``rtol = 0``)

where ``spread(v) = max(v) - min(v)`` and ``max|v|`` are taken over the finite values of the vector,
``rtol`` is the relative tie tolerance (:data:`TIE_RTOL` = 1e-9 by default) and :data:`NOISE_RTOL` = 2^-46
(about 64 units in the last place of the vector's largest value). The first term merges values whose gap is
negligible *relative to the spread of the scores*: averaged Likert scores and metric scores that are equal in
exact arithmetic differ in the last bits depending on the summation order (SummEval's ``s3.resp`` holds such
pairs 200 ulps apart), and must still be ties for Kendall's tau, pairwise accuracy and the pair signs of the
analyses. The second term merges differences at the rounding level of the values themselves (a metric shifted
by 1e10 has a float spacing of 2e-6, so its summation noise is far above ``rtol * spread``). Both terms are
invariant to scaling the vector and the first to shifting it, so no statistic changes under ``x -> a x + b``
as long as every gap of distinct values exceeds ``NOISE_RTOL * max|a x + b|`` (docs/statistics.md, "The tie
rule"). ``rtol = 0`` is exact comparison, as scipy does; reproducing a table computed with scipy to the last
digit needs it.

The public functions that rank values take ``tie_tolerance=`` (validated by :func:`check_tie_tolerance`) and pass
it down as the explicit parameter ``rtol`` of everything below them (the generic coefficients of
:mod:`metaeval.stats.correlations.coefficients`, the kernels' tie ranks of :mod:`metaeval.stats.kernels.ranks`, the
analyses' pair signs), which calls :func:`are_tied` (with the vector's :func:`tie_tolerances`): every code path
of one call uses the one value it was given, and there is no ambient setting to inherit (worker processes
receive it with their task).

Pearson's r does not rank: whether a vector is constant for it does not depend on ``rtol``
(:func:`is_constant`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from metaeval import defaults
from metaeval.errors import ParameterError

__all__ = ["NOISE_RTOL", "TIE_RTOL", "are_tied", "check_tie_tolerance", "is_constant", "tie_tolerances",
           "tolerance_formula", "tolerance_from_extent"]

TIE_RTOL = defaults.TIE_TOLERANCE
"""Default tolerance, relative to the spread of a vector, under which two of its values are tied."""

NOISE_RTOL = 2.0 ** -46
"""Relative rounding level: values closer than this times the largest magnitude of their vector are tied
(for any ``rtol > 0``), and a vector whose spread is within it is constant for Pearson's r."""

def check_tie_tolerance(value: Any) -> float:
    """The one validator of ``tie_tolerance``: a finite number in [0, 1e-3]."""
    try:
        rtol = float(value)
    except (TypeError, ValueError):
        rtol = float("nan")
    if isinstance(value, (bool, np.bool_)) or not 0.0 <= rtol <= 1e-3:
        raise ParameterError(f"`tie_tolerance` must be a number in [0, 0.001] (0 = exact ties); got {value!r}.")
    return rtol


def _extent(v, axis, finite_only=True):
    """Largest and smallest finite value of ``v`` along ``axis`` (keepdims); NaN where none is finite.
    ``finite_only=False`` skips the test for infinite values (the callers' values are finite or NaN)."""
    v = np.asarray(v, dtype=np.float64)
    if v.ndim == 0:
        v = v[None]
    if v.shape[axis] == 0:
        empty = np.full(np.sum(np.zeros_like(v), axis=axis, keepdims=True).shape, np.nan)
        return empty, empty
    if finite_only:
        finite = np.isfinite(v)
        if not finite.all():
            v = np.where(finite, v, np.nan)
    return np.fmax.reduce(v, axis=axis, keepdims=True), np.fmin.reduce(v, axis=axis, keepdims=True)


def tolerance_formula(hi, lo, rtol, noise):
    """``max(rtol (hi - lo), noise max(|hi|, |lo|))``, computed as ``rtol hi - rtol lo`` (no overflow of
    ``hi - lo`` near the float limit): the tie tolerance of a vector with largest finite value ``hi`` and
    smallest ``lo`` (module docstring; ``noise`` is :data:`NOISE_RTOL`). The one place the formula is
    written: scalars or arrays here, and the compiled loops compile this same function."""
    return np.maximum(rtol * hi - rtol * lo, noise * np.maximum(np.abs(hi), np.abs(lo)))


def _tolerance(hi, lo, rtol):
    with np.errstate(invalid="ignore", over="ignore"):
        tol = tolerance_formula(hi, lo, rtol, NOISE_RTOL)
    return np.where(np.isfinite(tol), tol, 0.0)


def tolerance_from_extent(hi, lo, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """``tol`` of vectors with largest finite value ``hi`` and smallest ``lo`` (arrays; NaN: no finite
    value), with the relative tolerance ``rtol``: for callers that know the extent already (sorted rows)."""
    hi = np.asarray(hi, dtype=np.float64)
    if rtol == 0.0:
        return np.zeros_like(hi)
    return _tolerance(hi, np.asarray(lo, dtype=np.float64), rtol)


def tie_tolerances(values, axis: int = -1, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """The absolute tie tolerance ``tol(v)`` of every vector of ``values`` along ``axis`` (keepdims).

    ``max(rtol * (max v - min v), NOISE_RTOL * max|v|)`` over the finite values of each vector (module
    docstring), with the relative tolerance ``rtol``; 0 under ``rtol = 0`` and for a vector without a finite
    value.
    """
    hi, lo = _extent(values, axis)
    if rtol == 0.0:
        return np.zeros_like(hi)
    return _tolerance(hi, lo, rtol)


def are_tied(a, b, tol=None, *, axis: int = -1, rtol: float = TIE_RTOL) -> np.ndarray:
    """Elementwise: ``|a - b| <= tol`` (False where either is NaN); exact equality under ``rtol = 0`` (``rtol``:
    the relative tie tolerance).

    ``tol`` is the absolute tolerance of the vector the values belong to (:func:`tie_tolerances`,
    broadcastable to ``a - b``). Without it, the vector is the union of ``a`` and ``b`` along ``axis``:
    right when the two arrays together hold every value of each vector (sorted neighbours
    ``s[..., 1:]`` and ``s[..., :-1]``, all pairs ``v[..., i]`` and ``v[..., j]``, a vector and its maximum).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if rtol == 0.0:
        return a == b
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.abs(a - b)
        if tol is not None or gap.size == 0:
            return gap <= (0.0 if tol is None else tol)
        # the tolerance of the union of all vectors bounds every vector's: when no gap but exact ties is
        # within it, the answer needs no per-vector extent (the common case, at a fraction of the cost)
        hi = max(np.fmax.reduce(a, axis=None), np.fmax.reduce(b, axis=None)) if a.size and b.size else np.nan
        lo = min(np.fmin.reduce(a, axis=None), np.fmin.reduce(b, axis=None)) if a.size and b.size else np.nan
        tied = gap <= _tolerance(np.float64(hi), np.float64(lo), rtol)
        if gap.ndim == 0:
            return tied
        near = tied & (gap > 0.0)
        if not near.any():
            return tied
        # a gap within the rounding floor of its own two values is within its vector's (whose max|v| is larger)
        near &= gap > NOISE_RTOL * np.maximum(np.abs(a), np.abs(b))
        if not near.any():
            return tied
        # the vectors (along ``axis``) holding a gap still open: their own tolerance
        moved = [np.moveaxis(np.broadcast_to(v, gap.shape), axis, -1) for v in (a, b, gap, near)]
        rows = moved[3].any(axis=-1)
        ha, la = _extent(moved[0][rows], -1, finite_only=False)
        hb, lb = _extent(moved[1][rows], -1, finite_only=False)
        out = np.moveaxis(tied.copy(), axis, -1)
        out[rows] = moved[2][rows] <= _tolerance(np.fmax(ha, hb), np.fmin(la, lb), rtol)
        return np.moveaxis(out, -1, axis)


def is_constant(values, axis: int = -1) -> np.ndarray:
    """Where the finite values of ``values`` along ``axis`` are constant for Pearson's r.

    ``max v - min v <= NOISE_RTOL * max|v|``: their differences are at the rounding level of the values
    (e.g. ``2.0`` and ``1.9999999999999998``, two summation orders of one mean), so a correlation of them
    would correlate rounding errors. Independent of the tie tolerance: Pearson does not rank. True where
    fewer than 2 values are finite.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 0 or v.shape[axis] < 2:
        return np.ones(np.sum(np.zeros_like(v), axis=axis).shape if v.ndim else (), dtype=bool)
    finite = np.isfinite(v)
    complete = bool(finite.all())
    if complete:
        hi, lo = v.max(axis=axis), v.min(axis=axis)
    else:
        w = np.where(finite, v, np.nan)
        hi, lo = np.fmax.reduce(w, axis=axis), np.fmin.reduce(w, axis=axis)
    with np.errstate(invalid="ignore", over="ignore"):
        const = ~(hi - lo > NOISE_RTOL * np.maximum(np.abs(hi), np.abs(lo)))
    if not complete:
        const |= finite.sum(axis=axis) < 2
    return const
