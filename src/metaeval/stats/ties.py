"""The tie rule of every rank statistic in metaeval, in one place.

Two values ``a`` and ``b`` are tied when ``|a - b| <= TIE_RTOL * max(|a|, |b|)``: averaged Likert scores
and metric scores that are equal in exact arithmetic can differ in the last bits depending on the
summation order (PITFALLS, "Resampling"), and must still be ties for Kendall's tau, pairwise accuracy
and the pair signs of the analyses. The generic coefficients (:mod:`metaeval.stats.coefficients`), the
kernels' tie ranks (:mod:`metaeval.stats.kernels.ranks`) and the analyses' pair signs all call
:func:`are_tied`.
"""
from __future__ import annotations

import numpy as np

__all__ = ["TIE_RTOL", "are_tied"]

TIE_RTOL = 1e-9
"""Relative tolerance under which two values are tied."""


def are_tied(a, b) -> np.ndarray:
    """Elementwise: ``|a - b| <= TIE_RTOL * max(|a|, |b|)`` (False where either is NaN)."""
    with np.errstate(invalid="ignore"):
        return np.abs(a - b) <= TIE_RTOL * np.maximum(np.abs(a), np.abs(b))
